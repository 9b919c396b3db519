import Type, { type Static } from '#typebox';
import { SUPPORTED_VERSIONS } from '../client/partner-client.js';
import type { OcpiVersion } from '../core/envelope.js';

/**
 * The endpoint of a partner's module interface in the highest version we support that has it.
 * A 2.2.1 endpoint names its interface (`role` SENDER or RECEIVER; a platform may list both for
 * one module); a 2.1.1 one does not: the partner's role decides which interface it is.
 */
export function interfaceOf(
  endpoints: ReadonlyArray<{ version: string; identifier: string; role?: string; url: string }>,
  identifier: string,
  role: 'SENDER' | 'RECEIVER',
): { version: OcpiVersion; url: string } | undefined {
  for (const version of SUPPORTED_VERSIONS) {
    const e = endpoints.find(
      (x) => x.version === version && x.identifier === identifier && (x.role === undefined || x.role === role),
    );
    if (e) return { version, url: e.url };
  }
  return undefined;
}

/** The modules whose objects we pull from a partner's Sender or push to its Receiver. */
export const ExchangeModule = Type.Union([
  Type.Literal('locations'),
  Type.Literal('tariffs'),
  Type.Literal('sessions'),
  Type.Literal('cdrs'),
  Type.Literal('tokens'),
]);
export type ExchangeModule = Static<typeof ExchangeModule>;
