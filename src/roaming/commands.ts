import { randomUUID } from 'node:crypto';
import { chargePointProtocol, type CommandAuthorization } from '../../actors/charge-point/protocol.js';
import { HAND_OVER_MS, ocpiCommandProtocol } from '../../actors/ocpi-command/protocol.js';
import { ChargePointStore } from '../csms/charge-point-store.js';
import { SessionReader } from '../csms/session-store.js';
import { checkChargePointState } from '../csms/views.js';
import type { ChargerCommandAnswer, ChargerCommandPort, ChargerCommandRequest } from '../ocpi/commands/charger-port.js';
import type { ChargerCommand } from '../ocpp/domain.js';
import { ObjectStore } from '../ocpi/store/object-store.js';
import { tokenFrom211 } from '../ocpi/tokens/mappers.js';
import type * as T211 from '../ocpi/tokens/schemas-2.1.1.js';
import type { Token } from '../ocpi/tokens/schemas-2.2.1.js';
import type { PlatformServices } from '../platform/services.js';
import { addressOf } from '../runtime/address.js';
import type { SqlRunner } from '../db/sql.js';
import { EvseLinkStore, type EvseLink } from './evse-links.js';
import { ReservationStore } from './reservations.js';

/**
 * Partners' commands on our chargers (docs/ROAMING.md "Commands"): the OCPI command is mapped to
 * the OCPP call of the charger's version and handed to an `ocpi-command` actor, which gives it to
 * the charge point and queues the result for the partner. ACCEPTED means the charge point took the
 * call; REJECTED says why not (not linked, offline, a token the charger's version cannot carry).
 */

/** OCPP 1.6 idTag is CiString20; 2.0.1 idToken 36 */
const ID_TAG_MAX: Record<string, number> = { 'ocpp1.6': 20, 'ocpp2.0.1': 36 };

type Target = { link: EvseLink } | { reason: string };
type Mapped = { chargePointId: string; command: ChargerCommand } | { reason: string };

/** The OCPP call of an OCPI command: which charger, what call (or why there is none). */
class CommandMapping {
  constructor(
    private readonly links: EvseLinkStore,
    private readonly chargePoints: ChargePointStore,
    private readonly sessions: SessionReader,
    private readonly reservations: ReservationStore,
    private readonly sql: SqlRunner,
    private readonly own: { country_code: string; party_id: string },
  ) {}

  /**
   * Why an UNLOCK_CONNECTOR of `partnerKey` may not reach EVSE `evse`: a transaction runs there
   * that is not a session of that eMSP's (another eMSP's driver, or one of ours). OCPP stops the
   * transaction on an unlock (1.6 UnlockConnector; 2.0.1 F05), so it would end another driver's
   * charge and let the cable go.
   */
  private async unlockRefusal(partnerKey: string, chargePointId: string, evse: number): Promise<string | undefined> {
    const running = await this.sql.query(
      `SELECT s.id, o.audience FROM csms_session s
         LEFT JOIN ocpi_object o ON o.module = 'sessions' AND o.country_code = ? AND o.party_id = ? AND o.object_id = s.id
       WHERE s.charge_point_id = ? AND s.evse_id = ? AND s.status = 'ACTIVE'`,
      [this.own.country_code, this.own.party_id, chargePointId, evse],
    );
    const foreign = running.find((r) => r.audience !== partnerKey);
    return foreign ? `a session that is not yours is running on this EVSE` : undefined;
  }

  /** The charger EVSE of an OCPI EVSE; with no EVSE named, the location's one linked EVSE. */
  private async evseTarget(locationId: string, evseUid: string | undefined): Promise<Target> {
    if (evseUid !== undefined) {
      const link = await this.links.byOcpiEvse(locationId, evseUid);
      return link ? { link } : { reason: `EVSE ${evseUid} is not linked to a charge point` };
    }
    const all = await this.links.ofLocation(locationId);
    const [only] = all;
    if (all.length === 1 && only) return { link: only };
    return {
      reason: all.length === 0 ? 'no EVSE of this location is linked to a charge point' : 'name the EVSE (evse_uid)',
    };
  }

  async of(
    req: ChargerCommandRequest,
  ): Promise<{ chargePointId: string; command: ChargerCommand } | { reason: string }> {
    const b = req.body;
    if (req.command === 'STOP_SESSION') {
      const session = await this.sessions.get(b.session_id ?? '');
      if (!session || session.status !== 'ACTIVE') return { reason: `session ${b.session_id ?? ''} is not active` };
      return {
        chargePointId: session.charge_point_id,
        command: { kind: 'stop', transaction_id: session.transaction_id },
      };
    }
    if (req.command === 'CANCEL_RESERVATION') return this.cancelReservation(req.partnerKey, String(b.reservation_id));
    const target = await this.evseTarget(b.location_id ?? '', b.evse_uid);
    if ('reason' in target) return target;
    const { charge_point_id: chargePointId, evse_number: evse } = target.link;
    if (req.command === 'UNLOCK_CONNECTOR') {
      const connector = Number(b.connector_id);
      if (!Number.isInteger(connector) || connector < 1)
        return { reason: `connector ${b.connector_id ?? ''} is not an OCPP connector number` };
      const refusal = await this.unlockRefusal(req.partnerKey, chargePointId, evse);
      if (refusal) return { reason: refusal };
      return { chargePointId, command: { kind: 'unlock', evse_id: evse, connector_id: connector } };
    }
    const uid = b.token?.uid ?? '';
    const row = await this.chargePoints.find(chargePointId);
    const max = ID_TAG_MAX[row?.protocol ?? 'ocpp1.6'] ?? 20;
    if (uid.length > max)
      return { reason: `token uid longer than the ${max} characters the charger's OCPP version takes` };
    if (req.command === 'RESERVE_NOW') return this.reserve(req, target.link, uid);
    return { chargePointId, command: { kind: 'start', id_tag: uid, evse_id: evse, connector_id: null } };
  }

  /** RESERVE_NOW: the partner's reservation id gets (or keeps) its OCPP id; the charger is asked to reserve. */
  private async reserve(req: ChargerCommandRequest, link: EvseLink, uid: string): Promise<Mapped> {
    const expiry = Date.parse(req.body.expiry_date ?? '');
    if (!Number.isFinite(expiry) || expiry <= Date.now()) return { reason: 'expiry_date is not in the future' };
    // the same id replaces a reservation at its charge point; one its charger holds elsewhere
    // would be left there, where no CANCEL_RESERVATION could reach it any more
    const held = await this.reservations.find(req.partnerKey, String(req.body.reservation_id));
    if (
      held &&
      held.charge_point_id !== link.charge_point_id &&
      (await this.heldBy(held.charge_point_id, held.ocpp_id))
    )
      return {
        reason: `reservation ${String(req.body.reservation_id)} is held by the charger of another charge point until ${new Date(held.expiry_at).toISOString()}: cancel it first`,
      };
    const r = await this.reservations.put({
      partner_key: req.partnerKey,
      reservation_id: String(req.body.reservation_id),
      charge_point_id: link.charge_point_id,
      evse_number: link.evse_number,
      expiry_at: expiry,
    });
    return {
      chargePointId: link.charge_point_id,
      command: {
        kind: 'reserve',
        reservation_id: r.ocpp_id,
        id_tag: uid,
        // a card's uid is what its reader reads (2.0.1 ISO14443); an app user's is an id of ours (Central)
        id_tag_type: req.body.token?.type === 'RFID' ? 'ISO14443' : 'Central',
        expiry_date: new Date(expiry).toISOString(),
        evse_id: link.evse_number,
        connector_id: null,
      },
    };
  }

  /**
   * Whether charge point `chargePointId` holds reservation `ocppId`, as its state was last
   * committed: accepted by its charger, not cancelled, expired or used by a start since.
   */
  private async heldBy(chargePointId: string, ocppId: number): Promise<boolean> {
    const state = await this.chargePoints.actorState(addressOf(chargePointProtocol.kind, chargePointId));
    if (!checkChargePointState(state)) return false;
    return state.reservations.some((r) => r.reservation_id === ocppId && Date.parse(r.expiry_date) > Date.now());
  }

  /** CANCEL_RESERVATION of a reservation the partner made with us (REJECTED when there is none). */
  private async cancelReservation(partnerKey: string, reservationId: string): Promise<Mapped> {
    const r = await this.reservations.find(partnerKey, reservationId);
    if (!r) return { reason: `no reservation ${reservationId} of yours` };
    if (r.expiry_at <= Date.now()) return { reason: `reservation ${reservationId} has expired` };
    return { chargePointId: r.charge_point_id, command: { kind: 'cancel-reservation', reservation_id: r.ocpp_id } };
  }
}

/** The 2.2.1 Token a START_SESSION or RESERVE_NOW carries (a 2.1.1 one is the caller's party's). */
function tokenOfCommand(req: ChargerCommandRequest): Token | undefined {
  const sent = req.body.token;
  if (!sent || (req.command !== 'START_SESSION' && req.command !== 'RESERVE_NOW')) return undefined;
  const [country_code = '', party_id = ''] = req.partnerKey.split('-');
  // validated by the Receiver against the version's Token schema
  return 'auth_id' in sent ? tokenFrom211(sent as T211.Token, { country_code, party_id }) : (sent as Token);
}

/** The session's token and reference, as the start call carries them to the charge point. */
function authorizationOf(token: Token, req: ChargerCommandRequest): CommandAuthorization {
  const { country_code, party_id, uid, type, contract_id } = token;
  const reference = req.body.authorization_reference;
  return {
    token: { country_code, party_id, uid, type, contract_id },
    ...(reference === undefined ? {} : { authorization_reference: reference }),
  };
}

export function chargerCommands(services: PlatformServices): ChargerCommandPort {
  const mapping = new CommandMapping(
    new EvseLinkStore(services.db),
    new ChargePointStore(services.db),
    new SessionReader(services.db),
    new ReservationStore(services.db),
    services.db.sql,
    { country_code: services.config.OCPI_COUNTRY_CODE, party_id: services.config.OCPI_PARTY_ID },
  );
  const { config, actors } = services;
  const tokens = new ObjectStore<Token>(services.db.sql, 'tokens');
  /**
   * The token a START_SESSION or RESERVE_NOW carries, kept when the eMSP never pushed it (an app
   * user's token): a charger's later Authorize of it (a reservation's start) finds it
   * (docs/ROAMING.md "Sessions"). A token the eMSP pushed is left as it is, and so is a uid
   * another party holds a token of.
   */
  async function rememberToken(token: Token): Promise<void> {
    const key = { country_code: token.country_code, party_id: token.party_id, id: token.uid };
    if (await tokens.get(key)) return;
    // a uid another party issued stays theirs: a card of that uid is not billed to this eMSP
    const [other] = await services.db.sql.query(
      `SELECT 1 AS n FROM ocpi_object WHERE module = 'tokens' AND lower(object_id) = lower(?)
         AND NOT (country_code = ? AND party_id = ?) LIMIT 1`,
      [token.uid, token.country_code, token.party_id],
    );
    if (!other) await tokens.put(key, token);
  }

  return {
    async execute(req): Promise<ChargerCommandAnswer> {
      const mapped = await mapping.of(req);
      if ('reason' in mapped) return { result: 'REJECTED', reason: mapped.reason, timeout_s: 0 };
      if (!(await actors.isPinned(addressOf(chargePointProtocol.kind, mapped.chargePointId))))
        return { result: 'REJECTED', reason: `charge point ${mapped.chargePointId} is offline`, timeout_s: 0 };
      const token = tokenOfCommand(req);
      if (token) await rememberToken(token);
      const timeout = config.OCPI_COMMAND_TIMEOUT_S;
      const reply = await actors.ref(ocpiCommandProtocol, randomUUID()).ask(
        {
          op: 'start',
          partner_key: req.partnerKey,
          version: req.version,
          command: req.command,
          response_url: req.body.response_url,
          charge_point_id: mapped.chargePointId,
          charger_command: mapped.command,
          timeout_s: timeout,
          // the transaction that follows a START_SESSION, or uses a RESERVE_NOW, is this token's,
          // whoever else holds its uid
          ...(token ? { authorization: authorizationOf(token, req) } : {}),
        },
        // longer than the command actor's own wait for the charge point
        { timeoutMs: HAND_OVER_MS + 5000 },
      );
      if (!reply?.accepted) return { result: 'REJECTED', reason: reply?.reason ?? 'not sent', timeout_s: 0 };
      return { result: 'ACCEPTED', reason: `sent to charge point ${mapped.chargePointId}`, timeout_s: timeout };
    },
  };
}
