import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Mocha from 'mocha';
import { commandLine, usageError } from './cli.js';

/**
 * The test command (`npm test`): the unit, embedded, OCPI, OCPP and roaming suites, then the cluster suite (real
 * Redis and PostgreSQL, several processes). `npm test -- embedded` or `-- cluster` runs one.
 * Ends with one summary line: "N passed, N failed, N skipped".
 */
const suites: Record<string, string[]> = {
  unit: ['test/unit', 'test/tariffs'],
  embedded: ['test/embedded'],
  ocpi: ['test/ocpi'],
  ocpp: ['test/ocpp'],
  roaming: ['test/roaming'],
  cluster: ['test/cluster'],
  browser: ['test/browser'],
};

const dist = resolve(import.meta.dirname, '..');

function files(dir: string): string[] {
  const abs = join(dist, dir);
  let names: string[];
  try {
    names = readdirSync(abs);
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    const p = join(abs, n);
    if (statSync(p).isDirectory()) return files(join(dir, n));
    return n.endsWith('.test.js') ? [p] : [];
  });
}

async function main(): Promise<void> {
  const { values, positionals: args } = commandLine({
    summary:
      'The test command (npm test): the unit, embedded, OCPI, OCPP and roaming suites, then the cluster\n' +
      'suite, or the suites named. Ends with one line: "N passed, N failed, N skipped".',
    options: {
      grep: { type: 'string', value: 'PATTERN', help: 'run only the tests whose title matches PATTERN' },
    },
    positionals: `[suite...]  (${Object.keys(suites).join(', ')})`,
  });
  const chosen = args.length > 0 ? args : Object.keys(suites);
  const grep = values.grep;
  const unknown = args.filter((a) => !(a in suites));
  if (unknown.length > 0) usageError(`unknown suite ${unknown.join(', ')}; known: ${Object.keys(suites).join(', ')}`);
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const name of chosen) {
    const dirs = suites[name];
    if (!dirs) throw new Error(`unknown suite ${name}; known: ${Object.keys(suites).join(', ')}`);
    const list = dirs.flatMap(files).sort();
    if (list.length === 0) continue;
    console.log(`\n=== suite ${name}: ${list.length} file(s) ===`);
    const mocha = new Mocha({ timeout: 60_000, reporter: 'spec', ...(grep ? { grep } : {}) });
    for (const f of list) mocha.addFile(f);
    await mocha.loadFilesAsync();
    const stats = await new Promise<Mocha.Stats>((resolveRun) => {
      const runner = mocha.run(() =>
        resolveRun(runner.stats ?? ({ passes: 0, failures: 0, pending: 0 } as Mocha.Stats)),
      );
    });
    passed += stats.passes;
    failed += stats.failures;
    skipped += stats.pending;
    mocha.dispose();
  }
  console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
  process.exit(failed > 0 ? 1 : 0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
