// Fails when the TypeScript sources import each other in a cycle, or when a file breaks a
// folder rule (below). Reads the import specifiers with the TypeScript compiler's own
// pre-processor (no type-checking, no emit) and follows relative imports; type-only imports
// count too, since a cycle of types is still a tangle a reader has to unpick.
//   node scripts/check-import-cycles.mjs        (run from the directory holding src/, actors/, ...)
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
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

// Folder rule (docs/ARCHITECTURE.md, "How to add an actor"): an actor is the runtime plus its own protocol, and reaches anything else
// through the ports handed to it (its deps object). So files under actors/ may import actors/,
// src/runtime/ and the vocabulary listed here, never the internals of the features hosting them.
const ACTOR_IMPORTS_ALLOWED = ['actors/', 'src/runtime/'];
/**
 * the charger protocol's domain types, shared by the actor and the OCPP adapters, and how its
 * timestamps are read (pure functions, no state of a feature)
 */
const ACTOR_VOCABULARY = ['src/ocpp/domain.ts', 'src/rfc3339.ts'];
/**
 * Imports that break the rule but are tolerated until they become ports (none left
 * today): each is `importer -> imported`. Remove an entry when its import goes; an entry that no longer matches
 * fails the check too, so the list cannot rot.
 */
const ACTOR_IMPORTS_PENDING = [];
const violations = [];
const pendingSeen = new Set();
function checkActorImport(file, target) {
  const from = relative(process.cwd(), file).split(sep).join('/');
  const to = relative(process.cwd(), target).split(sep).join('/');
  if (!from.startsWith('actors/')) return;
  if (ACTOR_IMPORTS_ALLOWED.some((p) => to.startsWith(p)) || ACTOR_VOCABULARY.includes(to)) return;
  const edge = `${from} -> ${to}`;
  if (ACTOR_IMPORTS_PENDING.includes(edge)) pendingSeen.add(edge);
  else violations.push(edge);
}

const graph = new Map();
for (const file of files) {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const deps = [];
  for (const imp of info.importedFiles) {
    if (!imp.fileName.startsWith('.')) continue;
    const target = resolve(dirname(file), imp.fileName.replace(/\.js$/, '.ts'));
    checkActorImport(file, target);
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

// only for importers that exist, so the check also runs over a partial tree (the unit test's)
const stale = ACTOR_IMPORTS_PENDING.filter((e) => !pendingSeen.has(e) && existsSync(e.split(' -> ')[0]));
for (const v of violations) console.error(`actors/ may import only actors/, src/runtime/ and ports passed in: ${v}`);
for (const e of stale)
  console.error(`allow-listed actor import no longer exists, remove it from ACTOR_IMPORTS_PENDING: ${e}`);
for (const c of cycles) console.error(`import cycle: ${c.map((f) => relative(process.cwd(), f)).join(' -> ')}`);
if (cycles.length > 0 || violations.length > 0 || stale.length > 0) process.exit(1);
console.log(`no import cycles in ${graph.size} files`);
