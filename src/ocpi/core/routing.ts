import type { Context } from 'koa';
import type { OcpiCaller, PartnerRole, PartyIdentity } from './auth.js';
import { identityMismatch, invalidParameters, wrongRole } from './errors.js';

/**
 * The party a caller acts as in one request (docs/OCPI.md "Platforms and hubs"). A partner's
 * token speaks for the party it was onboarded as and, for a 2.2.1 platform or hub, for the other
 * CPO and eMSP roles its credentials listed. The 2.2.1 routing headers (`OCPI-from-*`) choose one
 * of them; without them, the route's role does (the onboarded party when it has that role).
 * `OCPI-to-*` must name us: this platform routes nothing on.
 */

export interface RoutingHeaders {
  from?: PartyIdentity;
  to?: PartyIdentity;
}

/** Whether `a` and `b` name the same party: CiStrings, compared without regard to case. */
export function sameParty(a: PartyIdentity, b: PartyIdentity): boolean {
  return (
    a.country_code.toUpperCase() === b.country_code.toUpperCase() &&
    a.party_id.toUpperCase() === b.party_id.toUpperCase()
  );
}

function pair(koa: Context, side: 'from' | 'to'): PartyIdentity | undefined {
  const country = koa.get(`OCPI-${side}-country-code`);
  const party = koa.get(`OCPI-${side}-party-id`);
  if (!country && !party) return undefined;
  if (!/^[A-Za-z]{2}$/.test(country) || !/^[A-Za-z0-9]{3}$/.test(party))
    throw invalidParameters([
      {
        field: `OCPI-${side}-${country ? 'party-id' : 'country-code'}`,
        message: `OCPI-${side}-country-code (CiString(2)) and OCPI-${side}-party-id (CiString(3)) go together`,
        type: 'value_error.routing_header',
      },
    ]);
  return { country_code: country.toUpperCase(), party_id: party.toUpperCase() };
}

/** The routing headers of a request to a functional module (configuration modules carry none). */
export function routingHeaders(koa: Context): RoutingHeaders {
  const from = pair(koa, 'from');
  const to = pair(koa, 'to');
  return { ...(from ? { from } : {}), ...(to ? { to } : {}) };
}

/** `OCPI-to-*` naming a party that is not ours: we are no hub (2001). */
export function assertAddressedToUs(to: PartyIdentity | undefined, ours: PartyIdentity): void {
  if (!to || sameParty(to, ours)) return;
  throw invalidParameters([
    {
      field: 'OCPI-to-party-id',
      message: `${to.country_code}-${to.party_id} is not a party of this platform, which routes no messages on`,
      type: 'value_error.not_our_party',
    },
  ]);
}

/** The caller acting as the party `from` names: one of its own, or 2001 (identity mismatch). */
export function actingFrom(caller: OcpiCaller, from: PartyIdentity | undefined): OcpiCaller {
  if (!from) return caller;
  const party = caller.parties.find((p) => sameParty(p, from));
  if (!party)
    throw identityMismatch(
      'country_code',
      `${from.country_code}/${from.party_id} (OCPI-from headers)`,
      caller.parties.map((p) => `${p.country_code}-${p.party_id}`).join(', '),
    );
  // a party with two roles: the one the route needs is chosen by `actingAs`
  return { ...caller, ...party, routed: true };
}

/**
 * The caller acting in `role` (a route for CPO or for eMSP partners): as it is when its party
 * has the role; else another party of its token with that party and role (when the headers chose
 * the party) or with that role (when they did not); else 403 (`wrongRole`).
 */
export function actingAs(caller: OcpiCaller, role: PartnerRole | undefined): OcpiCaller {
  if (!role || caller.role === role) return caller;
  const party = caller.parties.find((p) => p.role === role && (!caller.routed || sameParty(p, caller)));
  if (!party) throw wrongRole(role, caller.role, caller.routed ? caller : undefined);
  return { ...caller, ...party };
}

/** The routing headers of our direct response: from us, to the party the request came from. */
export function responseRoutingHeaders(ours: PartyIdentity, to: PartyIdentity): Record<string, string> {
  return {
    'OCPI-from-country-code': ours.country_code,
    'OCPI-from-party-id': ours.party_id,
    'OCPI-to-country-code': to.country_code,
    'OCPI-to-party-id': to.party_id,
  };
}
