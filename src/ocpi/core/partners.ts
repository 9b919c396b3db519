import { randomUUID } from 'node:crypto';
import type { PlatformServices } from '../../platform/services.js';
import { HttpError } from '../../gateway/errors.js';
import {
  HANDSHAKE_ASK_TIMEOUT_MS,
  partnerKey,
  partnerProtocol,
  type PartnerMessage,
  type PartnerReply,
  type PartnerView,
} from '../../../actors/partner/protocol.js';
import { hashToken, newToken, type PartnerRole, type PartyRole, type TokenDirectory } from './auth.js';
import type { OcpiVersion } from './envelope.js';
import {
  credentialsMethodNotAllowed,
  noMatchingEndpoints,
  unableToUseClientApi,
  unauthorized,
  unsupportedVersion,
} from './errors.js';

export type { PartnerView } from '../../../actors/partner/protocol.js';

/** A partner as the `ocpi_partner` projection has it (endpoints and business details live in the actor). */
/**
 * A WHERE condition on `ocpi_partner p`: the registered partner whose link speaks for one party in
 * one role (onboarded as it, or a platform whose credentials list it). Its parameters, in order:
 * country_code, party_id, role, country_code, party_id, role (`speaksForParams`).
 */
export const SPEAKS_FOR = `p.status = 'registered'
  AND ((p.country_code = ? AND p.party_id = ? AND p.role = ?)
    OR EXISTS (SELECT 1 FROM ocpi_partner_party pp WHERE pp.partner_id = p.id AND pp.country_code = ? AND pp.party_id = ? AND pp.role = ?))`;

export function speaksForParams(party: PartyRole): string[] {
  return [party.country_code, party.party_id, party.role, party.country_code, party.party_id, party.role];
}

export interface PartnerRow extends Omit<PartnerView, 'endpoints' | 'business_details' | 'allowed_parties'> {
  created_at: string;
  updated_at: string;
}

/**
 * The web side of the partner actor: asks it, turns its tagged replies into OCPI errors
 * (docs/OCPI.md "The credentials link"), keeps the token cache of this process in step with rotations, and reads the
 * `ocpi_partner` projection for the operator's lists.
 */
export class PartnerDirectory {
  constructor(
    private readonly services: PlatformServices,
    private readonly tokens: TokenDirectory,
    /** tells the other processes (cluster mode) which tokens stopped working */
    private readonly revoked: (hashes: readonly string[]) => void = () => undefined,
  ) {}

  async ask(countryCode: string, partyId: string, message: PartnerMessage): Promise<PartnerReply> {
    // a handshake calls the partner inside the turn; everything else is answered from the
    // actor's state and keeps the default bound
    const calls = message.op === 'register' || message.op === 'rotate';
    const reply = await this.services.actors
      .ref(partnerProtocol, partnerKey(countryCode, partyId))
      .ask(message, calls ? { timeoutMs: HANDSHAKE_ASK_TIMEOUT_MS } : undefined);
    if (reply.ok && reply.revoked.length > 0) {
      this.tokens.forget(reply.revoked);
      this.revoked(reply.revoked);
    }
    return reply;
  }

  /** Ask, and turn a refusal into the OCPI error a credentials endpoint answers with. */
  async askOcpi(
    countryCode: string,
    partyId: string,
    message: PartnerMessage,
    version: OcpiVersion,
  ): Promise<Extract<PartnerReply, { ok: true }>> {
    const reply = await this.ask(countryCode, partyId, message);
    if (reply.ok) return reply;
    switch (reply.code) {
      case 'method_not_allowed':
        throw credentialsMethodNotAllowed(reply.message);
      case 3001:
        throw unableToUseClientApi(reply.message);
      case 3002:
        throw unsupportedVersion(reply.message);
      case 3003:
        throw noMatchingEndpoints(reply.message);
      default:
        // the token was revoked between the lookup and the turn
        throw unauthorized(version);
    }
  }

  /**
   * Onboarding by an operator: a new partner (or a fresh Token A for an unregistered one), and
   * the other parties it may speak for (a 2.2.1 platform; none of ours, none another partner's).
   */
  async create(
    countryCode: string,
    partyId: string,
    role: PartnerRole,
    allowedParties: PartyRole[] = [],
  ): Promise<{ partner: PartnerView; token: string }> {
    const held = await this.services.db.execute(
      'SELECT partner_id FROM ocpi_partner_party WHERE country_code = ? AND party_id = ?',
      [countryCode, partyId],
    );
    if (held.length > 0)
      throw new HttpError(
        409,
        'party_of_another_partner',
        `${countryCode}-${partyId} is a party of another partner's link`,
      );
    const existing = await this.services.db.execute(
      'SELECT id FROM ocpi_partner WHERE country_code = ? AND party_id = ?',
      [countryCode, partyId],
    );
    const self = existing[0] ? String(existing[0].id) : '';
    const taken = await this.holderOf(
      allowedParties.filter((p) => p.country_code !== countryCode || p.party_id !== partyId),
      self,
    );
    if (taken)
      throw new HttpError(
        409,
        'party_of_another_partner',
        `${taken.country_code}-${taken.party_id} (${taken.role}) belongs to another partner`,
      );
    const token = newToken();
    const reply = await this.ask(countryCode, partyId, {
      op: 'create',
      id: randomUUID(),
      role,
      initial_hash: hashToken(token),
      allowed_parties: allowedParties,
    });
    if (!reply.ok) throw new HttpError(409, 'partner_registered', reply.message);
    return { partner: reply.partner, token };
  }

  async list(): Promise<PartnerRow[]> {
    const rows = await this.services.db.execute(
      'SELECT id, country_code, party_id, role, status, versions_url, version, created_at, updated_at FROM ocpi_partner ORDER BY created_at, id',
    );
    const parties = await this.services.db.execute(
      'SELECT partner_id, country_code, party_id, role FROM ocpi_partner_party ORDER BY country_code, party_id, role',
    );
    return rows.map((r) => this.fromRow(r, parties));
  }

  async byId(id: string): Promise<PartnerRow | undefined> {
    const rows = await this.services.db.execute(
      'SELECT id, country_code, party_id, role, status, versions_url, version, created_at, updated_at FROM ocpi_partner WHERE id = ?',
      [id],
    );
    const row = rows[0];
    if (!row) return undefined;
    const parties = await this.services.db.execute(
      'SELECT partner_id, country_code, party_id, role FROM ocpi_partner_party WHERE partner_id = ? ORDER BY country_code, party_id, role',
      [id],
    );
    return this.fromRow(row, parties);
  }

  /** The registered partner whose link speaks for `party` in its role, if any. */
  async speakingFor(party: PartyRole): Promise<PartnerRow | undefined> {
    const rows = await this.services.db.execute(
      `SELECT p.id FROM ocpi_partner p WHERE ${SPEAKS_FOR} LIMIT 1`,
      speaksForParams(party),
    );
    const id = rows[0]?.id;
    return id === undefined ? undefined : this.byId(String(id));
  }

  /**
   * Of the parties a partner's credentials list, those the operator allowed it (the actor keeps
   * the list), and the first of them another partner holds meanwhile, if any.
   */
  async granted(
    countryCode: string,
    partyId: string,
    partnerId: string,
    claimed: PartyRole[],
  ): Promise<{ granted: PartyRole[]; taken?: PartyRole }> {
    if (claimed.length === 0) return { granted: [] };
    const state = await this.ask(countryCode, partyId, { op: 'get' });
    const allowed = state.ok ? state.partner.allowed_parties : [];
    const granted = claimed.filter((c) =>
      allowed.some((a) => a.country_code === c.country_code && a.party_id === c.party_id && a.role === c.role),
    );
    const taken = await this.holderOf(granted, partnerId);
    return taken ? { granted, taken } : { granted };
  }

  /**
   * Who holds any of `parties` other than partner `except`: as its onboarded party or as one its
   * link speaks for. A party and role belongs to one partner (docs/OCPI.md "Platforms and hubs").
   */
  async holderOf(parties: PartyRole[], except: string): Promise<PartyRole | undefined> {
    for (const p of parties) {
      const rows = await this.services.db.execute(
        `SELECT id FROM ocpi_partner WHERE country_code = ? AND party_id = ? AND id <> ?
         UNION ALL SELECT partner_id FROM ocpi_partner_party WHERE country_code = ? AND party_id = ? AND role = ? AND partner_id <> ?`,
        [p.country_code, p.party_id, except, p.country_code, p.party_id, p.role, except],
      );
      if (rows.length > 0) return p;
    }
    return undefined;
  }

  private fromRow(r: Record<string, unknown>, parties: Array<Record<string, unknown>>): PartnerRow {
    return {
      parties: parties
        .filter((p) => p.partner_id === r.id)
        .map((p) => ({
          country_code: String(p.country_code),
          party_id: String(p.party_id),
          role: p.role === 'CPO' ? ('CPO' as const) : ('EMSP' as const),
        })),
      id: String(r.id),
      country_code: String(r.country_code),
      party_id: String(r.party_id),
      role: r.role === 'CPO' ? 'CPO' : 'EMSP',
      status: r.status === 'registered' ? 'registered' : 'unregistered',
      versions_url: typeof r.versions_url === 'string' ? r.versions_url : null,
      version: r.version === '2.1.1' || r.version === '2.2.1' ? r.version : null,
      created_at: new Date(Number(r.created_at)).toISOString(),
      updated_at: new Date(Number(r.updated_at)).toISOString(),
    };
  }
}
