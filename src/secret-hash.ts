import { createHash } from 'node:crypto';

/**
 * How a secret we hand out is stored and compared (docs/ARCHITECTURE.md; one function for all of them): OCPI
 * tokens, charger identity keys, the operator's bearer key. SHA-256, hex. The secrets are random
 * and long, so no salt or stretching is needed, and a boot storm of chargers or a burst of
 * partner calls stays cheap to verify. Changing this invalidates every stored token hash.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}
