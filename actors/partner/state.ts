import Type, { type Static } from '#typebox';
import { Business, Endpoint, Party, Role, Version, type PartnerView } from './protocol.js';

/** The partner actor's state and the transitions of a link that need no I/O. */

/**
 * initial: Token A, before the registration; retired: Token A after it, which only the credentials
 * module still answers (GET: our credentials; POST, PUT, DELETE: 405, the state table's rows for a
 * registered link called with the initial token); current: the link's token; pending: ours, while
 * we register with the partner.
 */
const Kind = Type.Union([
  Type.Literal('initial'),
  Type.Literal('retired'),
  Type.Literal('current'),
  Type.Literal('pending'),
]);

export const PartnerState = Type.Object({
  id: Type.String(),
  country_code: Type.String(),
  party_id: Type.String(),
  role: Role,
  /** new: never created; unregistered: known, no link (Token A out, or after DELETE); registered: linked */
  status: Type.Union([Type.Literal('new'), Type.Literal('unregistered'), Type.Literal('registered')]),
  tokens: Type.Array(Type.Object({ hash: Type.String(), kind: Kind })),
  /** the token we present to the partner, and where its versions are */
  their_token: Type.Union([Type.String(), Type.Null()]),
  versions_url: Type.Union([Type.String(), Type.Null()]),
  version: Type.Union([Version, Type.Null()]),
  endpoints: Type.Array(Endpoint),
  business_details: Type.Union([Business, Type.Null()]),
  /** parties besides this one that the link speaks for (states stored before they existed have none) */
  parties: Type.Optional(Type.Array(Party)),
  /** what the operator allowed at onboarding: a link speaks only for parties of this list */
  allowed_parties: Type.Optional(Type.Array(Party)),
  created_at: Type.Integer(),
  updated_at: Type.Integer(),
});
export type PartnerState = Static<typeof PartnerState>;

/** A partner never created: the key names its country code and party id. */
export function initialPartnerState(key: string): PartnerState {
  const [country_code = '', party_id = ''] = key.split('-');
  return {
    id: '',
    country_code,
    party_id,
    role: 'CPO',
    status: 'new',
    tokens: [],
    their_token: null,
    versions_url: null,
    version: null,
    endpoints: [],
    business_details: null,
    parties: [],
    allowed_parties: [],
    created_at: 0,
    updated_at: 0,
  };
}

export function viewOf(s: PartnerState): PartnerView {
  return {
    id: s.id,
    country_code: s.country_code,
    party_id: s.party_id,
    role: s.role,
    status: s.status === 'registered' ? 'registered' : 'unregistered',
    versions_url: s.versions_url,
    version: s.version,
    endpoints: s.endpoints,
    business_details: s.business_details,
    parties: s.parties ?? [],
    allowed_parties: s.allowed_parties ?? [],
  };
}

/** A registered link: `current_hash` is our one valid token; the partner's token, URL and endpoints as discovered. */
export function linked(
  s: PartnerState,
  link: Pick<PartnerState, 'their_token' | 'versions_url' | 'version' | 'endpoints' | 'business_details'> & {
    current_hash: string;
    /** absent: the parties stay as they were (a rotation from our side) */
    parties?: PartnerState['parties'];
  },
): PartnerState {
  return {
    ...s,
    status: 'registered',
    // Token A is retired, not forgotten (Kind); every other token of before stops working
    tokens: [
      ...s.tokens
        .filter((t) => t.kind === 'initial' || t.kind === 'retired')
        .map((t) => ({ ...t, kind: 'retired' as const })),
      { hash: link.current_hash, kind: 'current' },
    ],
    their_token: link.their_token,
    versions_url: link.versions_url,
    version: link.version,
    endpoints: link.endpoints,
    business_details: link.business_details ?? s.business_details,
    parties: link.parties ? allowedOf(s, link.parties) : (s.parties ?? []),
  };
}

/** No link any more: every token of ours stops working, the partner's are forgotten. */
export function unlinked(s: PartnerState): PartnerState {
  return {
    ...s,
    status: 'unregistered',
    tokens: [],
    their_token: null,
    versions_url: null,
    version: null,
    endpoints: [],
    parties: [],
  };
}

export function hashesExcept(s: PartnerState, keep: string): string[] {
  return s.tokens.filter((t) => t.hash !== keep).map((t) => t.hash);
}

export function allHashes(s: PartnerState): string[] {
  return s.tokens.map((t) => t.hash);
}

/**
 * The parties of `claimed` the operator allowed (docs/OCPI.md "Platforms and hubs"): a partner's
 * credentials may list any roles, the link speaks only for those the operator named.
 */
export function allowedOf(
  s: PartnerState,
  claimed: NonNullable<PartnerState['parties']>,
): NonNullable<PartnerState['parties']> {
  const allowed = s.allowed_parties ?? [];
  return claimed.filter((c) =>
    allowed.some((a) => a.country_code === c.country_code && a.party_id === c.party_id && a.role === c.role),
  );
}
