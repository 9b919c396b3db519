import { randomBytes, timingSafeEqual } from 'node:crypto';
import { hashSecret } from '../secret-hash.js';

/**
 * Identity key material of a charger: the HTTP Basic password of OCPP security profile 1.
 * 24 random bytes, base64url: 32 characters, inside 2.0.1's BasicAuthPassword limit of 40.
 * The key is random and long, so a plain SHA-256 is enough to store it (no stretching needed,
 * and a boot storm of thousands of chargers stays cheap to verify).
 */
export function newIdentityKey(): string {
  return randomBytes(24).toString('base64url');
}

export function hashIdentityKey(key: string): string {
  return hashSecret(key);
}

export function identityKeyMatches(key: string, storedHash: string): boolean {
  const given = Buffer.from(hashIdentityKey(key), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}
