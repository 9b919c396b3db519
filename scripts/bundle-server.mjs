// Bundles the platform's own compiled modules (dist/src, dist/actors, dist/config; about 200 ES
// modules) into dist/server/main.js, the entry `npm start` and the Procfile run. Node resolves,
// reads, compiles and links every ES module of a start on its own; one file instead of 200 took
// 110-160 ms off the median time to /readyz on a 2-vCPU machine (docs/PERFORMANCE.md, cold start).
// Packages stay external: Node loads them from node_modules as before. What a process loads only
// when it needs it (MikroORM and migrations, the PostgreSQL executor, the Redis transport) stays
// behind its dynamic import, as chunks of its own beside main.js.
//
// The input is tsc's output, the code the tests run. A module's `import.meta.url` (the files it
// reads beside itself: Lua scripts, the dashboard, the pricing worker) is rewritten to the URL it
// has in dist/, so each file finds what it found unbundled; any other `import.meta` use fails the
// build. Source maps chain to the TypeScript sources (`node --enable-source-maps`).
import { rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import { build } from 'esbuild';

const outdir = resolve('dist/server');
const own = resolve('dist') + sep;

/** `import.meta.url` of a module as it is in dist/, from wherever the bundle puts its code. */
const importMetaOfOwnModules = {
  name: 'import-meta-of-own-modules',
  setup(b) {
    b.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(own)) return undefined;
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta')) return { contents: text, loader: 'js' };
      const other = text.replaceAll('import.meta.url', '').match(/import\.meta\b.{0,20}/);
      if (other)
        throw new Error(`${args.path}: only import.meta.url is supported in bundled code (found "${other[0]}")`);
      const path = relative(outdir, args.path).split(sep).join('/');
      const url = `new URL(${JSON.stringify(path)}, import.meta.url).href`;
      return { contents: text.replaceAll('import.meta.url', url), loader: 'js' };
    });
  },
};

// chunks are named by their content: a new build must not leave the last one's beside it
rmSync(outdir, { recursive: true, force: true });
const result = await build({
  entryPoints: ['dist/src/main.js'],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  sourcesContent: false,
  legalComments: 'linked',
  plugins: [importMetaOfOwnModules],
  metafile: true,
  logLevel: 'warning',
});
if (process.argv.includes('--size')) {
  const inputs = Object.keys(result.metafile.inputs).length;
  for (const [file, out] of Object.entries(result.metafile.outputs))
    if (file.endsWith('.js')) console.log(`${file}: ${out.bytes} bytes`);
  console.log(`${inputs} modules bundled`);
}
