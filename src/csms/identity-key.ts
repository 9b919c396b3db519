import { randomInt, timingSafeEqual } from 'node:crypto';
import { hashSecret } from '../secret-hash.js';

/**
 * Identity key material of a charger: the HTTP Basic password of OCPP security profiles 1 and 2
 * (docs/CSMS.md "Passwords"). A generated one is 20 characters drawn uniformly from A-Z a-z 0-9:
 * about 119 random bits, inside both versions' rule (src/ocpp/basic-auth-password.ts: a 1.6
 * AuthorizationKey carries at most 20 octets, a 2.0.1 BasicAuthPassword at most 40 characters),
 * and nothing a charger's configuration page could mistake for hexadecimal (32-40 characters) or
 * need escaping. The key is random and long, so a plain SHA-256 is enough to store it (no
 * stretching needed, and a boot storm of thousands of chargers stays cheap to verify). Keys issued
 * before (32 base64url characters) keep working: only their hash is compared.
 */
const GENERATED_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const GENERATED_LENGTH = 20;

export function newIdentityKey(): string {
  let key = '';
  // randomInt draws without modulo bias
  for (let i = 0; i < GENERATED_LENGTH; i += 1) key += GENERATED_ALPHABET.charAt(randomInt(GENERATED_ALPHABET.length));
  return key;
}

export function hashIdentityKey(key: string): string {
  return hashSecret(key);
}

export function identityKeyMatches(key: string, storedHash: string): boolean {
  const given = Buffer.from(hashIdentityKey(key), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}

/**
 * Which of a charger's passwords `key` is: its password, the new one sent to it whose outcome is
 * not known yet (both are valid meanwhile), or neither.
 */
export function credentialOf(
  key: string,
  stored: { key_hash: string; pending_key_hash: string | null },
): 'current' | 'pending' | undefined {
  if (identityKeyMatches(key, stored.key_hash)) return 'current';
  if (stored.pending_key_hash !== null && identityKeyMatches(key, stored.pending_key_hash)) return 'pending';
  return undefined;
}
