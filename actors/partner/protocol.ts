import Type, { type Static } from '#typebox';
import { defineProtocol } from '../../src/runtime/protocol.js';

/**
 * The partner actor's protocol (the actor: actors/partner/actor.ts): what the credentials
 * endpoints and the management API ask it. Every message is answered with a `PartnerReply`.
 */

export const Role = Type.Union([Type.Literal('CPO'), Type.Literal('EMSP')]);
export const Version = Type.Union([Type.Literal('2.1.1'), Type.Literal('2.2.1')]);
export const Business = Type.Object({ name: Type.String(), website: Type.Optional(Type.String()) });
/** A party a partner speaks for besides the one it was onboarded as (a 2.2.1 platform or hub). */
export const Party = Type.Object({ country_code: Type.String(), party_id: Type.String(), role: Role });
export const Endpoint = Type.Object({
  version: Type.String(),
  identifier: Type.String(),
  role: Type.Optional(Type.String()),
  url: Type.String(),
});

const Handshake = {
  caller_hash: Type.String(),
  /** the version of the mount the handshake came through: how we send the partner's token */
  version: Version,
  their_token: Type.String(),
  versions_url: Type.String(),
  business_details: Type.Union([Business, Type.Null()]),
  new_hash: Type.String(),
  /** the other roles its 2.2.1 credentials list (absent: none; a 2.1.1 link has one party) */
  parties: Type.Optional(Type.Array(Party)),
};

export const PartnerMessage = Type.Union([
  Type.Object({
    op: Type.Literal('create'),
    id: Type.String(),
    role: Role,
    initial_hash: Type.String(),
    /** the other parties the operator lets this partner speak for (a 2.2.1 platform) */
    allowed_parties: Type.Optional(Type.Array(Party)),
  }),
  Type.Object({ op: Type.Literal('get') }),
  Type.Object({ op: Type.Literal('register'), ...Handshake }),
  Type.Object({ op: Type.Literal('rotate'), ...Handshake }),
  Type.Object({ op: Type.Literal('unregister') }),
  Type.Object({ op: Type.Literal('prepare-outbound'), pending_hash: Type.String() }),
  Type.Object({
    op: Type.Literal('complete-outbound'),
    pending_hash: Type.String(),
    their_token: Type.String(),
    versions_url: Type.String(),
    version: Version,
    endpoints: Type.Array(Endpoint),
    business_details: Type.Union([Business, Type.Null()]),
    parties: Type.Optional(Type.Array(Party)),
  }),
  Type.Object({ op: Type.Literal('abort-outbound'), pending_hash: Type.String() }),
]);
export type PartnerMessage = Static<typeof PartnerMessage>;

/** What an operator or a mount sees of a partner (no secrets of ours). */
export interface PartnerView {
  id: string;
  country_code: string;
  party_id: string;
  role: 'CPO' | 'EMSP';
  status: 'unregistered' | 'registered';
  versions_url: string | null;
  version: '2.1.1' | '2.2.1' | null;
  endpoints: Array<Static<typeof Endpoint>>;
  business_details: Static<typeof Business> | null;
  /**
   * the other parties the link speaks for: those of `allowed_parties` its credentials list
   * (docs/OCPI.md "Platforms and hubs")
   */
  parties: Array<Static<typeof Party>>;
  /** the other parties the operator lets the partner speak for */
  allowed_parties: Array<Static<typeof Party>>;
}

/** Replies are tagged unions: errors cross process boundaries as data, not as thrown objects. */
export type PartnerReply =
  | { ok: true; partner: PartnerView; revoked: string[]; their_token: string | null }
  | { ok: false; code: 'not_found' | 'exists' | 'method_not_allowed' | 3001 | 3002 | 3003; message: string };

export const HANDSHAKE_ASK_TIMEOUT_MS = 30_000;

export function partnerKey(countryCode: string, partyId: string): string {
  return `${countryCode}-${partyId}`;
}

export const partnerProtocol = defineProtocol<PartnerReply>()({ kind: 'partner', messages: PartnerMessage });
