// Fails when the TypeScript sources import each other in a cycle. Reads the import
// specifiers with the TypeScript compiler's own pre-processor (no type-checking, no emit) and
// follows relative imports; type-only imports count too, since a cycle of types is still a
// tangle a reader has to unpick.
//   node scripts/check-import-cycles.mjs
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const roots = ['src', 'actors', 'config', 'scripts', 'test'];
const files = [];
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) files.push(resolve(p));
  }
}
for (const r of roots) if (existsSync(r)) walk(r);

const graph = new Map();
for (const file of files) {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const deps = [];
  for (const imp of info.importedFiles) {
    if (!imp.fileName.startsWith('.')) continue;
    const target = resolve(dirname(file), imp.fileName.replace(/\.js$/, '.ts'));
    if (graph.has(target) || files.includes(target)) deps.push(target);
  }
  graph.set(file, deps);
}

const state = new Map(); // 1 = on the stack, 2 = done
const cycles = [];
function visit(node, stack) {
  state.set(node, 1);
  stack.push(node);
  for (const dep of graph.get(node) ?? []) {
    if (state.get(dep) === 1) cycles.push([...stack.slice(stack.indexOf(dep)), dep]);
    else if (!state.has(dep)) visit(dep, stack);
  }
  stack.pop();
  state.set(node, 2);
}
for (const f of graph.keys()) if (!state.has(f)) visit(f, []);

if (cycles.length > 0) {
  for (const c of cycles) console.error(`import cycle: ${c.map((f) => relative(process.cwd(), f)).join(' -> ')}`);
  process.exit(1);
}
console.log(`no import cycles in ${graph.size} files`);
