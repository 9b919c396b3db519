// `npm start` and `npm test` build first, but only when something changed since the last build:
// the newest source file or folder (a rename or a deletion changes its folder), tsconfig.json,
// package.json or package-lock.json against dist/.build-stamp, which only a whole `npm run build`
// that succeeded writes (a failed type check, `tsc --watch` or a bare `tsc` leave it as it was).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const stamp = join('dist', '.build-stamp');
const roots = ['src', 'actors', 'config', 'scripts', 'test'];
const files = ['tsconfig.json', 'package.json', 'package-lock.json'];

/** The newest modification time under `dir` (0 when it does not exist). */
function newest(dir) {
  if (!existsSync(dir)) return 0;
  let latest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const time = entry.isDirectory() ? newest(path) : statSync(path).mtimeMs;
    if (time > latest) latest = time;
  }
  return latest;
}

const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
const changed = Math.max(...roots.map(newest), ...files.map((f) => (existsSync(f) ? statSync(f).mtimeMs : 0)));
if (built > 0 && changed <= built) process.exit(0);
process.stderr.write(
  built > 0
    ? 'building dist/ (sources changed since the last build)...\n'
    : 'building dist/ (the first build takes about a minute)...\n',
);
const run = spawnSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit', shell: process.platform === 'win32' });
process.exit(run.status ?? 1);
