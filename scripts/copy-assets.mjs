// Copies the non-TypeScript files the runtime reads (Lua scripts, dashboard assets) next to the
// compiled JavaScript in dist/. The console's sources (src/dashboard/app/) are bundled instead
// (bundle-console.mjs).
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const roots = ['src', 'actors'];
const assetExt = /\.(lua|html|css|js|svg|json)$/;
const bundled = join('src', 'dashboard', 'app');

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (path === bundled) continue;
    if (statSync(path).isDirectory()) walk(path);
    else if (assetExt.test(name)) cpSync(path, join('dist', path));
  }
}

for (const root of roots) if (existsSync(root)) walk(root);
