import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { commandLine } from './cli.js';

/**
 * `npm run test:watch -- [suite...] [--grep=pattern]`: the edit-compile-test loop. It keeps
 * `tsc --watch` running and, after each compile that ends without errors, copies the assets,
 * bundles the product's entry (scripts/bundle-server.mjs) and runs the chosen suites (the same
 * arguments `dist/scripts/run-tests.js` takes). A compile that starts while a run is going stops
 * that run first, so the output on screen always belongs to the newest code.
 *
 *   npm run test:watch -- unit
 *   npm run test:watch -- embedded --grep=typed
 */
const root = resolve(import.meta.dirname, '..', '..');
// checked as run-tests checks them, so that a typo shows at once rather than after each compile
const { values, positionals } = commandLine({
  summary: 'The edit-compile-test loop: tsc --watch, and after each clean compile the suites named (all by default).',
  options: { grep: { type: 'string', value: 'PATTERN', help: 'run only the tests whose title matches PATTERN' } },
  positionals: '[suite...]',
});
const testArgs = [...positionals, ...(values.grep === undefined ? [] : [`--grep=${values.grep}`])];
const bin = (name: string): string => resolve(root, 'node_modules', '.bin', name);

let run: ChildProcess | undefined;

function stopRun(): void {
  if (run && run.exitCode === null) run.kill('SIGTERM');
  run = undefined;
}

/** Runs a build script of scripts/ and then `next`, unless the script failed. */
function thenRun(script: string, next: () => void): void {
  const step = spawn(process.execPath, [resolve(root, 'scripts', script)], { cwd: root, stdio: 'inherit' });
  step.on('exit', (code) => {
    if (code === 0) next();
  });
}

function startRun(): void {
  stopRun();
  // the assets beside the compiled code, then the product's entry the spawned processes run
  thenRun('copy-assets.mjs', () =>
    thenRun('bundle-server.mjs', () => {
      run = spawn(process.execPath, [resolve(root, 'dist', 'scripts', 'run-tests.js'), ...testArgs], {
        cwd: root,
        stdio: 'inherit',
      });
    }),
  );
}

const tsc = spawn(bin('tsc'), ['-p', 'tsconfig.json', '--watch', '--preserveWatchOutput'], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
});

let pending = '';
tsc.stdout.setEncoding('utf8');
tsc.stdout.on('data', (chunk: string) => {
  process.stdout.write(chunk);
  pending += chunk;
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    if (line.includes('File change detected') || line.includes('Starting compilation')) stopRun();
    // tsc prints "Found 0 errors. Watching for file changes." after a clean compile
    if (/Found 0 errors\./.test(line)) startRun();
  }
});

const shutdown = (): void => {
  stopRun();
  tsc.kill('SIGTERM');
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
tsc.on('exit', (code) => process.exit(code ?? 1));
