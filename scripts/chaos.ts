import { randomInt } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { formatReport, violations } from './chaos/report.js';
import { runChaos } from './chaos/scenario.js';
import { commandLine, usageError } from './cli.js';

/**
 * The chaos run for people: the scenario of test/cluster/chaos.test.ts, longer. Rounds of
 * kill -9 of one web (restarted), SIGSTOP of the other past the lease TTL, and a restart of a
 * private redis-server, under charging load, until --minutes have passed; then every
 * acknowledged transaction message is looked up in /v1/sessions. Loopback only; it starts and
 * stops everything it uses (PostgreSQL from TEST_DATABASE_URL, a schema of its own).
 *
 *   npm run build && node dist/scripts/chaos.js --minutes 5 --chargers 60 --seed 42 [--out report.json]
 *
 * Prints the figures and a verdict; exits 1 when a guarantee was broken.
 */
const { values: args } = commandLine({
  summary:
    'The chaos run: kill -9 of a web process, SIGSTOP of another past the lease TTL and a Redis\n' +
    'restart, in rounds under charging load; then every acknowledged transaction message is looked up.',
  options: {
    minutes: { type: 'string', default: '3', help: 'how long the rounds go on (at most 120)' },
    chargers: { type: 'string', default: '40', help: 'simulated chargers (at most 2000)' },
    seed: { type: 'string', help: 'seed of the schedule (default: a random one, printed)' },
    'lease-ttl': { type: 'string', default: '3000', value: 'MS', help: 'shard lease TTL of the web processes' },
    'redis-down': { type: 'string', default: '3000', value: 'MS', help: 'how long Redis stays down each round' },
    out: { type: 'string', value: 'FILE', help: 'write the whole report (every violation) as JSON to FILE' },
  },
  notes: 'Exit status 1 when a guarantee was broken.',
});

function positive(name: string, raw: string | undefined, max: number): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || n > max)
    usageError(`--${name} must be a number in (0, ${max}], not ${JSON.stringify(raw ?? '')}`);
  return n;
}

async function main(): Promise<void> {
  const minutes = positive('minutes', args.minutes, 120);
  const chargers = Math.round(positive('chargers', args.chargers, 2000));
  const seed = args.seed === undefined ? randomInt(1, 1_000_000) : Math.round(positive('seed', args.seed, 2 ** 31));
  const leaseTtlMs = Math.round(positive('lease-ttl', args['lease-ttl'], 120_000));
  const redisDownMs = Math.round(positive('redis-down', args['redis-down'], 60_000));
  const started = Date.now();
  const until = started + minutes * 60_000;
  console.log(`chaos: ${chargers} chargers for about ${minutes} min, seed ${seed} (repeat with --seed ${seed})`);
  const report = await runChaos({
    chargers,
    seed,
    // a round takes about 20 s plus the warm-up; no new round starts past the deadline
    another: () => Date.now() < until,
    leaseTtlMs,
    warmupMs: 5000,
    redisDownMs,
    log: (line) => console.log(`[${((Date.now() - started) / 1000).toFixed(0)} s] ${line}`),
  });
  for (const line of formatReport(report)) console.log(line);
  if (args.out) writeFileSync(args.out, JSON.stringify(report, null, 2));
  const broken = violations(report);
  if (broken.length === 0) {
    console.log('verdict: PASS (0 crashes, 0 5xx, 0 hangs, 0 acknowledged messages lost, 0 duplicate sessions)');
    process.exit(0);
  }
  console.log(`verdict: FAIL, ${broken.length} violation(s):`);
  // a few of each kind ("5xx", "hang", "lost", ...), so that one kind does not hide the others
  const kinds = new Map<string, string[]>();
  for (const v of broken) {
    const kind = v.slice(0, v.indexOf(':'));
    kinds.set(kind, [...(kinds.get(kind) ?? []), v]);
  }
  for (const [kind, list] of kinds) {
    console.log(`  ${kind}: ${list.length}`);
    for (const v of list.slice(0, 8)) console.log(`    ${v}`);
  }
  process.exit(1);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
