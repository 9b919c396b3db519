import Type, { type Static } from '#typebox';
import type { PlatformModule } from '../../../src/platform/services.js';
import { defineActor, defineProtocol } from '../../../src/runtime/types.js';

/** Stands in for an OCPI command actor: keeps the command results the charge-point actor sends it. */
const Result = Type.Object({
  type: Type.Literal('charge-point-command-result'),
  charge_point_id: Type.String(),
  command_id: Type.String(),
  kind: Type.String(),
  status: Type.String(),
  detail: Type.Union([Type.String(), Type.Null()]),
});

export const resultProbeProtocol = defineProtocol<{
  'charge-point-command-result': null;
  get: Array<Static<typeof Result>>;
}>()({
  kind: 'command-result-probe',
  discriminant: 'type',
  messages: Type.Union([Result, Type.Object({ type: Type.Literal('get') })]),
});

export const resultProbeActor = defineActor(resultProbeProtocol, {
  placement: 'sharded',
  state: Type.Object({ results: Type.Array(Result) }),
  initialState: () => ({ results: [] }),
  handle(ctx, msg) {
    if (msg.type === 'get') return ctx.state.results;
    ctx.setState({ results: [...ctx.state.results, msg] });
    return null;
  },
});

export const resultProbeModule: PlatformModule = { name: 'result-probe', actors: [resultProbeActor] };
