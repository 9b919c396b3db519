import Type from '#typebox';
import type { PlatformModule } from '../src/platform/services.js';
import type { ActorSystem } from '../src/runtime/actor-system.js';
import { defineActor, defineProtocol } from '../src/runtime/types.js';
import {
  clusterEnvironment,
  embeddedEnvironment,
  startPlatform,
  type TestEnvironment,
} from '../test/support/platforms.js';
import { commandLine, numberOption } from './cli.js';

/**
 * Actor turns that set state and write one row, committed two ways in the same run:
 * - `driver`: the runtime's path (src/db/sql.ts prepared statements, group commit);
 * - `orm`: the same turn with `ctx.em` touched, which commits it the MikroORM way (a transaction
 *   of its own through knex, values written into the SQL text, AsyncLocalStorage context): the
 *   cost the per-turn path had before it moved onto the drivers (minus one statement: the fence
 *   check is folded into the state write on both paths).
 * On embedded SQLite and on PostgreSQL (cluster mode, Redis placement, one process).
 *
 *   npm run build && node dist/scripts/bench-turns.js [--seconds=4] [--actors=64] [--sqlite-only]
 *
 * Bounded: each phase runs for a fixed time with one ask in flight per actor, then everything it
 * started is stopped and removed. Prints turns per second and the ratio driver / orm.
 */
const { values: args } = commandLine({
  summary: 'Actor turns committed the driver way and the MikroORM way, on embedded SQLite and on PostgreSQL.',
  options: {
    seconds: { type: 'string', default: '4', value: 'S', help: 'length of each phase' },
    actors: { type: 'string', default: '64', help: 'actors, one ask in flight each' },
    'sqlite-only': { type: 'boolean', default: false, help: 'leave out PostgreSQL' },
  },
});
const SECONDS = numberOption('seconds', args.seconds, { min: 0.1 });
const ACTORS = numberOption('actors', args.actors, { min: 1, integer: true });

const BenchMessage = Type.Object({ via: Type.Union([Type.Literal('driver'), Type.Literal('orm')]) });
const benchProtocol = defineProtocol<number>()({ kind: 'bench-turn', messages: BenchMessage });
const benchActor = defineActor(benchProtocol, {
  placement: 'sharded',
  state: Type.Object({ n: Type.Integer() }),
  initialState: () => ({ n: 0 }),
  handle(ctx, msg) {
    // reading ctx.em gives the turn an EntityManager, and so the MikroORM commit
    if (msg.via === 'orm') void ctx.em;
    const n = ctx.state.n + 1;
    ctx.setState({ n });
    ctx.write(async (tx) => {
      await tx.run('INSERT INTO bench_turn_row (address, n, at) VALUES (?, ?, ?)', [ctx.address, n, Date.now()]);
    });
    return n;
  },
});
const benchModule: PlatformModule = { name: 'bench-turns', actors: [benchActor] };

async function phase(actors: ActorSystem, via: 'driver' | 'orm'): Promise<{ perSecond: number; p99: number }> {
  const run = async (ms: number, samples?: number[]): Promise<number> => {
    let done = 0;
    const until = performance.now() + ms;
    await Promise.all(
      Array.from({ length: ACTORS }, async (_, i) => {
        const ref = actors.ref(benchProtocol, `${via}-${i}`);
        while (performance.now() < until) {
          const t = performance.now();
          await ref.ask({ via });
          samples?.push(performance.now() - t);
          done++;
        }
      }),
    );
    return done;
  };
  await run(500); // activations and statement caches warm
  const samples: number[] = [];
  const done = await run(SECONDS * 1000, samples);
  samples.sort((a, b) => a - b);
  return { perSecond: done / SECONDS, p99: samples[Math.floor(samples.length * 0.99)] ?? NaN };
}

async function database(name: string, env: TestEnvironment): Promise<void> {
  const started = await startPlatform(env, [benchModule]);
  try {
    const { db, actors } = started.platform.services;
    await db.sql.run(
      'CREATE TABLE IF NOT EXISTS bench_turn_row (address TEXT NOT NULL, n INTEGER NOT NULL, at BIGINT NOT NULL)',
    );
    // alternate, so that neither path always runs on a warmer machine
    const orm1 = await phase(actors, 'orm');
    const driver1 = await phase(actors, 'driver');
    const orm2 = await phase(actors, 'orm');
    const driver2 = await phase(actors, 'driver');
    const orm = (orm1.perSecond + orm2.perSecond) / 2;
    const driver = (driver1.perSecond + driver2.perSecond) / 2;
    const line = (label: string, v: number, a: { p99: number }, b: { p99: number }): string =>
      `  ${label.padEnd(8)} ${v.toFixed(0).padStart(7)} turns/s   p99 ${a.p99.toFixed(1)} / ${b.p99.toFixed(1)} ms`;
    console.log(`${name}, ${ACTORS} actors, one ask in flight each, ${SECONDS} s x 2 per path:`);
    console.log(line('orm', orm, orm1, orm2));
    console.log(line('driver', driver, driver1, driver2));
    console.log(`  driver / orm = ${(driver / orm).toFixed(2)}x`);
  } finally {
    await started.stop();
    await env.cleanup();
  }
}

async function main(): Promise<void> {
  await database('embedded SQLite', await embeddedEnvironment());
  if (!args['sqlite-only']) {
    await database('PostgreSQL (cluster mode, one process)', await clusterEnvironment({ PROCESS_ROLE: 'all' }));
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
