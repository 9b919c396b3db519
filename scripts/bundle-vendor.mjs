// Bundles the dependencies whose many small ES modules dominate a process's start into a few
// files under dist/vendor/, which package.json "imports" maps the `#typebox...` specifiers to.
// TypeBox 1.x is 709 modules: Node resolves, reads and links each one, 400-450 ms of a start on
// this project's machines; bundled (with the entry points' shared code in common chunks, so one
// copy of its registries) it loads in about 50 ms. Types still come from the package itself.
import { build } from 'esbuild';

const typeboxEntries = ['index', 'compile/index', 'value/index', 'error/index'];

await build({
  entryPoints: typeboxEntries.map((e) => `node_modules/typebox/build/${e}.mjs`),
  outbase: 'node_modules/typebox/build',
  outdir: 'dist/vendor/typebox',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  legalComments: 'linked',
  logLevel: 'warning',
});
