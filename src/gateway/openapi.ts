import Type, { type TSchema } from '#typebox';
import type { MountSpec } from './route-table.js';

type Json = Record<string, unknown>;

function toOpenApiPath(prefix: string, path: string): string {
  const p = `${prefix}${path === '/' ? '' : path}` || '/';
  return p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function parametersOf(schema: TSchema | undefined, where: 'path' | 'query'): Json[] {
  if (!schema || !Type.IsObject(schema)) return [];
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, prop]) => ({
    name,
    in: where,
    required: where === 'path' ? true : required.has(name),
    schema: prop,
    ...(descriptionOf(prop) ? { description: descriptionOf(prop) } : {}),
  }));
}

function descriptionOf(schema: TSchema): unknown {
  return 'description' in schema ? schema.description : undefined;
}

/** OpenAPI 3.1 (JSON Schema 2020-12 compatible, so TypeBox schemas drop in as they are). */
export function buildOpenApi(
  mounts: ReadonlyArray<MountSpec<unknown>>,
  info: { title: string; version: string; serverUrl: string },
): Json {
  const paths: Record<string, Json> = {};
  for (const mount of mounts) {
    for (const route of mount.routes) {
      const key = toOpenApiPath(mount.prefix, route.path);
      const op: Json = {
        summary: route.summary,
        tags: [mount.name],
        operationId: `${mount.name}:${route.method} ${route.path}`,
        parameters: [...parametersOf(route.params, 'path'), ...parametersOf(route.query, 'query')],
        responses: {
          [route.method === 'POST' && !mount.respond && route.path.endsWith('s') ? '201' : '200']: {
            description: 'success',
            ...(route.response ? { content: { 'application/json': { schema: route.response } } } : {}),
          },
          ...Object.fromEntries(
            Object.entries(route.responses ?? {}).map(([status, description]) => [status, { description }]),
          ),
        },
      };
      if (route.body)
        op.requestBody = { required: !route.bodyOptional, content: { 'application/json': { schema: route.body } } };
      if (mount.security && route.auth !== false) op.security = [{ [mount.security]: [] }];
      paths[key] = { ...(paths[key] ?? {}), [route.method.toLowerCase()]: op };
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    servers: [{ url: info.serverUrl }],
    paths,
    components: {
      securitySchemes: {
        ocpiToken: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'Token <token> (2.2.1: base64 of the token, or raw)',
        },
        bearer: { type: 'http', scheme: 'bearer', description: 'CSMS_API_KEY' },
      },
    },
  };
}
