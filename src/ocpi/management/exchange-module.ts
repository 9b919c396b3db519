import Type, { type Static } from '#typebox';

/** The modules whose objects we pull from a partner's Sender or push to its Receiver (pull.ts, push.ts). */
export const ExchangeModule = Type.Union([
  Type.Literal('locations'),
  Type.Literal('tariffs'),
  Type.Literal('sessions'),
  Type.Literal('cdrs'),
  Type.Literal('tokens'),
]);
export type ExchangeModule = Static<typeof ExchangeModule>;
