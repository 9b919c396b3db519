import Type, { type Static } from '#typebox';
import type { PlatformModule } from '../../src/platform/services.js';
import { UnrecoverableError } from '../../src/runtime/errors.js';
import { defineActor, defineProtocol } from '../../src/runtime/types.js';

/**
 * Actor kinds used by the runtime tests. `counter` records every turn in test_turn_log inside
 * the turn's fenced transaction, so a checker can look for overlapping activations afterwards.
 */
export const TURN_LOG_SQL = {
  postgresql: `CREATE TABLE IF NOT EXISTS test_turn_log (
    id BIGSERIAL PRIMARY KEY, address TEXT NOT NULL, fence_key TEXT NOT NULL, process TEXT NOT NULL,
    epoch BIGINT NOT NULL, seq TEXT, started_at DOUBLE PRECISION NOT NULL, ended_at DOUBLE PRECISION NOT NULL,
    recorded_at DOUBLE PRECISION NOT NULL)`,
  sqlite: `CREATE TABLE IF NOT EXISTS test_turn_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT, address TEXT NOT NULL, fence_key TEXT NOT NULL, process TEXT NOT NULL,
    epoch BIGINT NOT NULL, seq TEXT, started_at REAL NOT NULL, ended_at REAL NOT NULL, recorded_at REAL NOT NULL)`,
};

const CounterMessage = Type.Union([
  Type.Object({
    op: Type.Literal('inc'),
    seq: Type.Optional(Type.String()),
    log: Type.Optional(Type.Boolean()),
    work_ms: Type.Optional(Type.Integer()),
    /** record the start of the turn at once (committed on its own), so a test sees it running */
    announce: Type.Optional(Type.Boolean()),
  }),
  Type.Object({ op: Type.Literal('get') }),
  Type.Object({ op: Type.Literal('fail') }),
  Type.Object({ op: Type.Literal('slow'), ms: Type.Integer() }),
  Type.Object({ op: Type.Literal('flaky'), failures: Type.Integer() }),
  Type.Object({ op: Type.Literal('remind'), in_ms: Type.Integer(), name: Type.String() }),
  Type.Object({ op: Type.Literal('timer'), in_ms: Type.Integer() }),
  Type.Object({ op: Type.Literal('fired'), via: Type.String() }),
  Type.Object({ op: Type.Literal('unrecoverable') }),
]);

const CounterState = Type.Object({
  count: Type.Integer(),
  flaky_attempts: Type.Integer(),
  fired: Type.Array(Type.String()),
  active: Type.Integer(),
  max_active: Type.Integer(),
  seqs: Type.Array(Type.String()),
});

/** how many turns run at once per address in this process (must never exceed 1) */
const running = new Map<string, number>();
let maxConcurrent = 0;
export function maxConcurrentTurns(): number {
  return maxConcurrent;
}

export type CounterState = Static<typeof CounterState>;

/** What each counter message is answered with (`fail` and `unrecoverable` only throw). */
interface CounterReplies {
  inc: number;
  get: CounterState;
  fail: never;
  slow: string;
  flaky: number;
  remind: string;
  timer: string;
  fired: null;
  unrecoverable: never;
}

export const counterProtocol = defineProtocol<CounterReplies>()({
  kind: 'counter',
  discriminant: 'op',
  messages: CounterMessage,
});

export const counterActor = defineActor(counterProtocol, {
  placement: 'sharded',
  state: CounterState,
  entityManager: true,
  initialState: () => ({ count: 0, flaky_attempts: 0, fired: [], active: 0, max_active: 0, seqs: [] }),
  async handle(ctx, msg) {
    const now = running.get(ctx.address) ?? 0;
    running.set(ctx.address, now + 1);
    maxConcurrent = Math.max(maxConcurrent, now + 1);
    try {
      const s = ctx.state;
      switch (msg.op) {
        case 'inc': {
          const started = Date.now();
          if (msg.announce) {
            await ctx.em.execute(
              'INSERT INTO test_turn_log (address, fence_key, process, epoch, seq, started_at, ended_at, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
              [ctx.address, 'started', ctx.processId, ctx.epoch, msg.seq ?? null, started, started, started],
            );
          }
          if (msg.work_ms) await new Promise((r) => setTimeout(r, msg.work_ms));
          const seqs = msg.seq ? [...s.seqs.slice(-49), msg.seq] : s.seqs;
          ctx.setState({ ...s, count: s.count + 1, seqs });
          if (msg.log) {
            const ended = Date.now();
            const fenceKey = ctx.durable ? 'durable' : 'ask';
            ctx.write(async (em) => {
              await em.execute(
                'INSERT INTO test_turn_log (address, fence_key, process, epoch, seq, started_at, ended_at, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
                [ctx.address, fenceKey, ctx.processId, ctx.epoch, msg.seq ?? null, started, ended, Date.now()],
              );
            });
          }
          return s.count + 1;
        }
        case 'get':
          return s;
        case 'fail':
          throw new Error('asked to fail');
        case 'slow':
          await new Promise((r) => setTimeout(r, msg.ms));
          return 'slow done';
        case 'flaky': {
          // fails the first `failures` deliveries; the attempt number comes from the runtime
          const attempt = ctx.durable?.attempt ?? 1;
          if (attempt <= msg.failures) throw new Error(`flaky failure ${attempt}`);
          ctx.setState({ ...s, flaky_attempts: attempt });
          return attempt;
        }
        case 'remind':
          ctx.setReminder(msg.name, Date.now() + msg.in_ms, { op: 'fired', via: `reminder:${msg.name}` });
          return 'set';
        case 'timer':
          ctx.setTimer('t', msg.in_ms, { op: 'fired', via: 'timer' });
          return 'set';
        case 'fired':
          ctx.setState({ ...s, fired: [...s.fired, msg.via] });
          return null;
        case 'unrecoverable':
          throw new UnrecoverableError('this message can never succeed');
      }
    } finally {
      running.set(ctx.address, (running.get(ctx.address) ?? 1) - 1);
    }
  },
});

const EchoMessage = Type.Object({ echo: Type.Unknown() });
/** Stateless: replies with what it got. The benchmark's actor. */
export const echoProtocol = defineProtocol<unknown>()({ kind: 'echo', messages: EchoMessage });
export const echoActor = defineActor(echoProtocol, {
  placement: 'sharded',
  state: Type.Object({}),
  initialState: () => ({}),
  handle: (_ctx, msg) => msg.echo,
});

export const deactivations: Array<{ address: string; reason: string }> = [];

/**
 * The module-level records above outlive a platform: every suite runs in one mocha process
 * (scripts/run-tests.ts), so a run that did not reset them could pass on what an earlier run
 * (the embedded one, before the cluster one) left behind (issue 7).
 */
export function resetTestActors(): void {
  running.clear();
  maxConcurrent = 0;
  deactivations.length = 0;
}

/** A pinned actor, as a charge point would be. */
export const pinnedProtocol = defineProtocol<{ hits: number; process: string; epoch: number }>()({
  kind: 'pinned',
  messages: Type.Object({ hit: Type.Boolean() }),
});
export const pinnedActor = defineActor(pinnedProtocol, {
  placement: 'pinned',
  state: Type.Object({ hits: Type.Integer() }),
  initialState: () => ({ hits: 0 }),
  idleMs: null,
  handle(ctx) {
    ctx.setState({ hits: ctx.state.hits + 1 });
    return { hits: ctx.state.hits, process: ctx.processId, epoch: ctx.epoch };
  },
  onDeactivate(address, reason) {
    deactivations.push({ address, reason });
  },
});

export function testActorsModule(): PlatformModule {
  return { name: 'test-actors', actors: [counterActor, echoActor, pinnedActor] };
}
