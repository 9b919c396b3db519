import { defineMount, type MountSpec } from '../../gateway/route-table.js';
import { ocpiErrors } from '../core/errors.js';
import { ErrorEnvelope } from '../core/schemas.js';

/**
 * `/ocpi` itself: no routes, only the error shape. A path under `/ocpi` that no OCPI mount holds
 * (`/ocpi/nowhere`, `/ocpi/3.0/...`) still answers with an OCPI envelope, status_code 2000
 * (docs/SECURITY.md "One error shape per surface").
 */
export function ocpiNamespaceMount(): MountSpec<unknown> {
  return defineMount<unknown>({
    name: 'ocpi',
    prefix: '/ocpi',
    errors: ocpiErrors,
    errorSchema: ErrorEnvelope,
    routes: [],
  });
}
