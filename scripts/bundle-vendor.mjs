// Bundles the dependencies whose many small ES modules dominate a process's start into a few
// files under dist/vendor/, which package.json "imports" maps the `#typebox...` specifiers to.
// TypeBox 1.x is 709 modules: Node resolves, reads and links each one, 400-450 ms of a start on
// this project's machines; bundled (with the entry points' shared code in common chunks, so one
// copy of its registries) it loads in about 50 ms. Types still come from the package itself.
import { copyFileSync, mkdirSync } from 'node:fs';
import { build } from 'esbuild';

const typeboxEntries = ['index', 'compile/index', 'value/index', 'error/index', 'system/index'];

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

// Swagger UI's browser bundle and styles for /docs (src/gateway/docs-mount.ts), served from
// dist/vendor/swagger-ui/ by the platform itself: the page loads nothing from another origin.
const swaggerUi = 'node_modules/swagger-ui-dist';
mkdirSync('dist/vendor/swagger-ui', { recursive: true });
for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css', 'LICENSE', 'NOTICE'])
  copyFileSync(`${swaggerUi}/${file}`, `dist/vendor/swagger-ui/${file}`);
