/**
 * Reading /openapi.json in tests: its operations with their parameters, body schema and security,
 * the shared schemas inlined, and a plausible value for a schema (the HTTP fuzz and the
 * documented-statuses tests).
 */

type Json = Record<string, unknown>;
export type Schema = Json;

export interface Operation {
  method: string;
  /** OpenAPI template: /ocpi/emsp/2.2.1/locations/{country_code}/... */
  template: string;
  pathParams: string[];
  queryParams: Array<{ name: string; schema: Schema }>;
  body?: Schema;
  security?: 'ocpiToken' | 'bearer';
  operationId: string;
  /** the statuses the operation documents */
  statuses: number[];
}

/** The node with every `$ref` to `#/components/schemas/...` replaced by the schema it names. */
export function inlineRefs(node: unknown, schemas: Record<string, unknown>): unknown {
  if (Array.isArray(node)) return node.map((x) => inlineRefs(x, schemas));
  if (node === null || typeof node !== 'object') return node;
  const ref = (node as Json).$ref;
  if (typeof ref === 'string') return inlineRefs(schemas[ref.replace('#/components/schemas/', '')], schemas);
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inlineRefs(v, schemas)]));
}

export function operationsOf(document: Json): Operation[] {
  const components = (document.components as { schemas?: Record<string, unknown> } | undefined)?.schemas ?? {};
  const doc = { paths: inlineRefs(document.paths, components) } as Json;
  const ops: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(item)) {
      const params = (op.parameters ?? []) as Array<{ name: string; in: string; schema: Schema }>;
      const body = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content?.[
        'application/json'
      ]?.schema;
      const security = (op.security as Array<Record<string, unknown>> | undefined)?.[0];
      ops.push({
        method: method.toUpperCase(),
        template,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema })),
        ...(body ? { body } : {}),
        ...(security ? { security: Object.keys(security)[0] as 'ocpiToken' | 'bearer' } : {}),
        operationId: String(op.operationId),
        statuses: Object.keys((op.responses ?? {}) as Json).map(Number),
      });
    }
  }
  return ops;
}

/** A plausible value for a schema: required fields only, literals and enums at their first value. */
export function sample(schema: Schema, name = '', depth = 0): unknown {
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const anyOf = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (anyOf?.[0]) return sample(anyOf[0], name, depth);
  if (name === 'country_code') return 'DE';
  if (name === 'party_id') return 'FZZ';
  switch (schema.type) {
    case 'object': {
      if (depth > 6) return {};
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const required = new Set((schema.required ?? []) as string[]);
      return Object.fromEntries(
        Object.entries(props)
          .filter(([k]) => required.has(k))
          .map(([k, s]) => [k, sample(s, k, depth + 1)]),
      );
    }
    case 'array':
      return typeof schema.minItems === 'number' && schema.minItems > 0 && schema.items
        ? [sample(schema.items as Schema, name, depth + 1)]
        : [];
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return true;
    case 'string':
      if (schema.format === 'date-time') return new Date().toISOString();
      if (schema.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
      if (name === 'url' || name.endsWith('_url')) return 'http://127.0.0.1:9/unreachable';
      return 'FUZZ-1';
    default:
      return null;
  }
}
