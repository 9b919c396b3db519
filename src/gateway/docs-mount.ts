import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineMount, type MountSpec, type RouteSpec } from './route-table.js';
import { staticAnswer, staticBytes } from './static-bytes.js';

/** our page and its script (src/api-docs, copied by scripts/copy-assets.mjs) */
const pageDir = fileURLToPath(new URL('../api-docs', import.meta.url));
/** Swagger UI's browser bundle (scripts/bundle-vendor.mjs copies it from swagger-ui-dist) */
const vendorDir = fileURLToPath(new URL('../../vendor/swagger-ui', import.meta.url));

/**
 * The policy of /docs: the dashboard's (csms/module.ts DASHBOARD_SECURITY_HEADERS) and one
 * addition, found by loading the page in Chromium (test/browser/api-docs.test.ts): Swagger UI's
 * stylesheet draws its icons as `data:` SVG images (img-src data:). Its bundle needs no inline
 * script, no inline style, no eval and no worker; every request goes to this origin.
 */
export const DOCS_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

/** A file of the page, read once; `no-cache` with its ETag: a browser asks again and gets a 304. */
function file(dir: string, name: string, type: string): RouteSpec<unknown>['handler'] {
  const bytes = staticBytes(() => readFileSync(join(dir, name)));
  return (req) => staticAnswer(req.koa, bytes(), type, { ...DOCS_SECURITY_HEADERS, 'Cache-Control': 'no-cache' });
}

/** /docs: a human page over /openapi.json (Swagger UI, served from here, no CDN). */
export function docsMount(): MountSpec<unknown> {
  return defineMount<unknown>({
    name: 'docs',
    prefix: '/docs',
    description: 'The API reference page: Swagger UI over /openapi.json',
    routes: [
      {
        method: 'GET',
        path: '/',
        summary: 'The API reference page (renders /openapi.json)',
        operationId: 'getDocs',
        handler: file(pageDir, 'index.html', 'text/html; charset=utf-8'),
      },
      {
        method: 'GET',
        path: '/docs.js',
        summary: "The page's script: starts Swagger UI on /openapi.json",
        handler: file(pageDir, 'docs.js', 'text/javascript; charset=utf-8'),
      },
      {
        method: 'GET',
        path: '/swagger-ui-bundle.js',
        summary: "Swagger UI's browser bundle",
        handler: file(vendorDir, 'swagger-ui-bundle.js', 'text/javascript; charset=utf-8'),
      },
      {
        method: 'GET',
        path: '/swagger-ui.css',
        summary: "Swagger UI's styles",
        handler: file(vendorDir, 'swagger-ui.css', 'text/css; charset=utf-8'),
      },
    ],
  });
}
