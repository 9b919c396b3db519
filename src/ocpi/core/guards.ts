import { HttpError } from '../../gateway/errors.js';
import type { OcpiCaller, PartnerRole, PartyIdentity, PartyRole } from './auth.js';
import type { OcpiVersion } from './envelope.js';
import { idMismatch, identityMismatch, unauthorized } from './errors.js';

/**
 * Checks every handler makes before it touches data: on the OCPI mounts (docs/OCPI.md "Who
 * sees what": Token A only registers, a caller names only its own party, a PUT body names the
 * id of its path), and on the operator's routes for our own data (docs/OCPI.md "Our own data").
 */

/** Module endpoints other than credentials need a registered link; Token A only registers. */
export function requireLink(caller: OcpiCaller, version: OcpiVersion): OcpiCaller {
  if (caller.tokenKind === 'initial' || caller.tokenKind === 'retired') throw unauthorized(version);
  return caller;
}

/**
 * The party named in the path (or body) must be the caller's own: the party it acts as, or
 * another its token speaks for in the same role (docs/OCPI.md "Platforms and hubs").
 */
export function assertOwnParty(
  caller: PartyIdentity & { role?: PartnerRole; parties?: PartyRole[] },
  named: Partial<PartyIdentity>,
): void {
  const country = named.country_code ?? caller.country_code;
  const party = named.party_id ?? caller.party_id;
  if (country === caller.country_code && party === caller.party_id) return;
  if (caller.parties?.some((p) => p.role === caller.role && p.country_code === country && p.party_id === party)) return;
  const bound = (caller.parties?.filter((p) => p.role === caller.role) ?? [caller])
    .map((p) => `${p.country_code}-${p.party_id}`)
    .join(', ');
  // the field is country_code for any identity mismatch (docs/OCPI.md "Who sees what")
  const given = named.country_code !== undefined && country !== caller.country_code ? country : `${country}/${party}`;
  throw identityMismatch('country_code', given, bound);
}

/** A PUT whose body names its own id must name the id of the path. */
export function assertSameId(field: string, pathValue: string, bodyValue: string | undefined): void {
  if (bodyValue !== undefined && bodyValue !== pathValue) throw idMismatch(field, pathValue, bodyValue);
}

/** Operator routes: 400 unless the party a body names is `own`; a field the body leaves out names ours. */
export function assertOurParty(
  own: PartyIdentity,
  named: { country_code?: string; party_id?: string },
  message: string,
): void {
  if (
    (named.country_code ?? own.country_code) !== own.country_code ||
    (named.party_id ?? own.party_id) !== own.party_id
  )
    throw new HttpError(400, 'not_own_party', message);
}

/** Operator routes: 400 unless the body's id is the one the path names. */
export function assertPathId(pathName: string, pathValue: string, bodyName: string, bodyValue: string): void {
  if (bodyValue !== pathValue)
    throw new HttpError(400, 'id_mismatch', `path ${pathName} ${pathValue} differs from body ${bodyName} ${bodyValue}`);
}
