// Copies the non-TypeScript files the runtime reads (Lua scripts, dashboard assets) next to the
// compiled JavaScript in dist/.
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const roots = ['src', 'actors'];
const assetExt = /\.(lua|html|css|js|svg|json)$/;

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (assetExt.test(name)) cpSync(path, join('dist', path));
  }
}

for (const root of roots) if (existsSync(root)) walk(root);
