import type { PartyIdentity } from '../core/auth.js';
import type * as T211 from './schemas-2.1.1.js';
import type * as T221 from './schemas-2.2.1.js';

/**
 * Tokens between the versions (docs/OCPI.md "Storage"). They are stored in the 2.2.1 shape: its
 * country_code and party_id are the issuing eMSP's (the key's), its contract_id is 2.1.1's
 * auth_id. 2.1.1 knows only RFID and OTHER: the app and ad-hoc types are OTHER there.
 */

export function tokenFrom211(t: T211.Token, party: PartyIdentity): T221.Token {
  const { auth_id, ...rest } = t;
  // a 2.1.1 token names no party: fields of that name a partner adds (2.1.1 objects are open)
  // do not make it another party's
  return { ...rest, country_code: party.country_code, party_id: party.party_id, contract_id: auth_id };
}

export function tokenTo211(t: T221.Token): T211.Token {
  return {
    uid: t.uid,
    type: t.type === 'RFID' ? 'RFID' : 'OTHER',
    auth_id: t.contract_id,
    ...(t.visual_number !== undefined ? { visual_number: t.visual_number } : {}),
    issuer: t.issuer,
    valid: t.valid,
    whitelist: t.whitelist,
    ...(t.language !== undefined ? { language: t.language } : {}),
    last_updated: t.last_updated,
  };
}

/** A 2.1.1 TokenPatch as the fields of the stored 2.2.1 token it changes. */
export function tokenPatchFrom211(p: T211.TokenPatch): Partial<T221.Token> {
  const { auth_id, ...rest } = p;
  return { ...rest, ...(auth_id !== undefined ? { contract_id: auth_id } : {}) };
}

/**
 * Whether a stored token answers to a `type` asked in 2.1.1 terms: OTHER there stands for every
 * type 2.1.1 does not know.
 */
export function matchesType211(t: T221.Token, type: T211.Token['type']): boolean {
  return type === 'RFID' ? t.type === 'RFID' : t.type !== 'RFID';
}
