import type { OcpiCaller, PartyIdentity } from './auth.js';
import { idMismatch, identityMismatch, unauthorized, type OcpiVersion } from './envelope.js';

/**
 * Checks every OCPI handler makes before it touches data (spec Authentication 5, Errors rules
 * 1-2).
 */

/** Module endpoints other than credentials need a registered link; Token A only registers. */
export function requireLink(caller: OcpiCaller, version: OcpiVersion): OcpiCaller {
  if (caller.tokenKind === 'initial') throw unauthorized(version);
  return caller;
}

/** The party named in the path (or body) must be the caller's own party. */
export function assertOwnParty(caller: PartyIdentity, named: Partial<PartyIdentity>): void {
  if (named.country_code !== undefined && named.country_code !== caller.country_code) {
    throw identityMismatch('country_code', named.country_code, `${caller.country_code}-${caller.party_id}`);
  }
  if (named.party_id !== undefined && named.party_id !== caller.party_id) {
    // spec Errors rule 1 names the field country_code for any identity mismatch
    throw identityMismatch(
      'country_code',
      `${named.country_code ?? caller.country_code}/${named.party_id}`,
      `${caller.country_code}-${caller.party_id}`,
    );
  }
}

/** A PUT whose body names its own id must name the id of the path. */
export function assertSameId(field: string, pathValue: string, bodyValue: string | undefined): void {
  if (bodyValue !== undefined && bodyValue !== pathValue) throw idMismatch(field, pathValue, bodyValue);
}
