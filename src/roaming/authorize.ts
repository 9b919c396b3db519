import Type from '#typebox';
import type { RoamingToken } from '../../actors/charge-point/ports.js';
import { partnerProtocol } from '../../actors/partner/protocol.js';
import type { Config } from '../../config/index.js';
import type { Database } from '../db/database.js';
import { compileLazily } from '../lazy-compile.js';
import { endpointOf, PartnerCallError, PartnerClient, partnerHttpOptions } from '../ocpi/client/partner-client.js';
import { SPEAKS_FOR, speaksForParams } from '../ocpi/core/partners.js';
import type { ActorMessenger } from '../runtime/types.js';

/**
 * Real-time authorization of a token at the eMSP that issued it (docs/ROAMING.md "Tokens"): POST
 * `{tokens}/{uid}/authorize` on the eMSP's tokens Sender, with the location and EVSEs when we know
 * them, within ROAMING_AUTHORIZE_TIMEOUT_MS. An answer is the eMSP's `allowed` (and 2.2.1
 * `authorization_reference`); anything else (no partner link, no endpoint, no answer in time, not
 * an AuthorizationInfo) is "unanswered", with the reason for our log.
 */

export type Allowed = 'ALLOWED' | 'BLOCKED' | 'EXPIRED' | 'NO_CREDIT' | 'NOT_ALLOWED';
/** Where the eMSP's answer lets the token charge (AuthorizationInfo.location: LocationReferences). */
export interface AllowedAt {
  location_id: string;
  /** empty: every EVSE of the location */
  evse_uids: string[];
}
export type RealTimeAnswer =
  | { allowed: Allowed; authorization_reference?: string; location?: AllowedAt }
  /** the eMSP answered with an OCPI client error (2004: it does not know the token) */
  | { refused: string }
  | { unanswered: string };

const Answer = Type.Object({
  allowed: Type.Union(
    (['ALLOWED', 'BLOCKED', 'EXPIRED', 'NO_CREDIT', 'NOT_ALLOWED'] as const).map((a) => Type.Literal(a)),
  ),
  authorization_reference: Type.Optional(Type.String({ maxLength: 36 })),
  // 2.2.1 and 2.1.1 LocationReferences (2.1.1 also has connector_ids: our links are EVSEs)
  location: Type.Optional(
    Type.Object({
      location_id: Type.String({ maxLength: 36 }),
      evse_uids: Type.Optional(Type.Array(Type.String({ maxLength: 36 }), { maxItems: 1000 })),
    }),
  ),
});
const checkAnswer = compileLazily(Answer);

export class RealTimeAuthorizer {
  private readonly client: PartnerClient;
  private readonly own: { country_code: string; party_id: string };
  /** the one deadline of an authorization: within the charger's ask (ASK_TIMEOUT_MS) */
  private readonly timeoutMs: number;

  constructor(
    config: Config,
    private readonly db: Database,
  ) {
    this.own = { country_code: config.OCPI_COUNTRY_CODE, party_id: config.OCPI_PARTY_ID };
    // the charger's turn must end before the OCPP endpoint's ask of it gives up
    this.timeoutMs = Math.max(100, Math.min(config.ROAMING_AUTHORIZE_TIMEOUT_MS, config.ASK_TIMEOUT_MS - 2000));
    // the same client and limits as every partner call, with the authorization's shorter deadline
    const opts = partnerHttpOptions(config);
    this.client = new PartnerClient({ ...opts, timeoutMs: Math.min(opts.timeoutMs, this.timeoutMs) });
  }

  /** The partner whose link speaks for the token's eMSP party, by its actor key. */
  private async partnerKeyOf(token: RoamingToken): Promise<string | undefined> {
    const [row] = await this.db.sql.query(
      `SELECT p.country_code, p.party_id FROM ocpi_partner p WHERE ${SPEAKS_FOR} LIMIT 1`,
      speaksForParams({ country_code: token.country_code, party_id: token.party_id, role: 'EMSP' }),
    );
    return row ? `${String(row.country_code)}-${String(row.party_id)}` : undefined;
  }

  /**
   * The eMSP's answer, or why there is none; never throws (a charger's authorization must get an
   * answer from its whitelist rule whatever happened on the way). One deadline for all of it.
   */
  async authorize(
    token: RoamingToken,
    where: { location_id: string; evse_uids: string[] } | undefined,
    actors: ActorMessenger,
  ): Promise<RealTimeAnswer> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<RealTimeAnswer>((resolve) => {
      timer = setTimeout(() => resolve({ unanswered: 'no answer in time' }), this.timeoutMs);
    });
    try {
      return await Promise.race([this.ask(token, where, actors), deadline]);
    } catch (err) {
      return { unanswered: err instanceof PartnerCallError ? err.reason : err instanceof Error ? err.name : 'failed' };
    } finally {
      clearTimeout(timer);
    }
  }

  private async ask(
    token: RoamingToken,
    where: { location_id: string; evse_uids: string[] } | undefined,
    actors: ActorMessenger,
  ): Promise<RealTimeAnswer> {
    const key = await this.partnerKeyOf(token);
    if (!key) return { unanswered: 'no registered partner for the token' };
    const reply = await actors.ref(partnerProtocol, key).ask({ op: 'get' }, { timeoutMs: this.timeoutMs });
    if (!reply.ok || !reply.their_token) return { unanswered: 'the partner is not registered' };
    const endpoint = endpointOf(reply.partner.endpoints, 'tokens', 'SENDER');
    if (!endpoint) return { unanswered: 'the partner lists no tokens Sender' };
    const query = endpoint.version === '2.2.1' ? `?type=${encodeURIComponent(token.type)}` : '';
    const url = `${endpoint.url.replace(/\/+$/, '')}/${encodeURIComponent(token.uid)}/authorize${query}`;
    const route = { from: this.own, to: { country_code: token.country_code, party_id: token.party_id } };
    const { status, envelope } = await this.client.call('POST', url, reply.their_token, endpoint.version, where, {
      route,
    });
    // an OCPI client error (2004 "unknown token") is the eMSP's answer: it does not know the token
    if (envelope.status_code >= 2000 && envelope.status_code < 3000)
      return { refused: `the eMSP answered status_code ${envelope.status_code}` };
    if (status < 200 || status >= 300 || envelope.status_code >= 3000)
      return { unanswered: `HTTP ${status}, status_code ${envelope.status_code}` };
    const data: unknown = envelope.data;
    if (!checkAnswer.Check(data)) return { unanswered: 'the answer is not an AuthorizationInfo' };
    return {
      allowed: data.allowed,
      ...(data.authorization_reference ? { authorization_reference: data.authorization_reference } : {}),
      ...(data.location
        ? { location: { location_id: data.location.location_id, evse_uids: data.location.evse_uids ?? [] } }
        : {}),
    };
  }
}
