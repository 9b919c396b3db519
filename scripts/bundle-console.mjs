// Bundles the operator console (src/dashboard/app/, Preact with htm) into one script,
// dist/src/dashboard/console.js, which the dashboard mount serves (src/csms/module.ts) beside
// index.html and console.css (copied by copy-assets.mjs). Minified, no source map (nothing is
// loaded from elsewhere), licences in console.js.LEGAL.txt.
import { statSync } from 'node:fs';
import { build } from 'esbuild';

const outfile = 'dist/src/dashboard/console.js';
await build({
  entryPoints: ['src/dashboard/app/main.js'],
  outfile,
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome110', 'firefox110', 'safari16'],
  legalComments: 'linked',
  logLevel: 'warning',
});
if (process.argv.includes('--size')) console.log(`${outfile}: ${statSync(outfile).size} bytes`);
