import { randomUUID } from 'node:crypto';
import { chargePointProtocol } from '../../actors/charge-point/protocol.js';
import { ocpiCommandProtocol } from '../../actors/ocpi-command/protocol.js';
import { ChargePointStore } from '../csms/charge-point-store.js';
import { SessionReader } from '../csms/session-store.js';
import type { ChargerCommandAnswer, ChargerCommandPort, ChargerCommandRequest } from '../ocpi/commands/charger-port.js';
import type { ChargerCommand } from '../ocpp/domain.js';
import type { PlatformServices } from '../platform/services.js';
import { addressOf } from '../runtime/address.js';
import { EvseLinkStore, type EvseLink } from './evse-links.js';

/**
 * Partners' commands on our chargers (docs/ROAMING.md "Commands"): the OCPI command is mapped to
 * the OCPP call of the charger's version and handed to an `ocpi-command` actor, which gives it to
 * the charge point and queues the result for the partner. ACCEPTED means the charge point took the
 * call; REJECTED says why not (not linked, offline, a token the charger's version cannot carry).
 */

/** OCPP 1.6 idTag is CiString20; 2.0.1 idToken 36 */
const ID_TAG_MAX: Record<string, number> = { 'ocpp1.6': 20, 'ocpp2.0.1': 36 };

type Target = { link: EvseLink } | { reason: string };

/** The OCPP call of an OCPI command: which charger, what call (or why there is none). */
class CommandMapping {
  constructor(
    private readonly links: EvseLinkStore,
    private readonly chargePoints: ChargePointStore,
    private readonly sessions: SessionReader,
  ) {}

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
    if (req.command === 'CANCEL_RESERVATION' || req.command === 'RESERVE_NOW')
      return { reason: 'reservations are not taken on this platform yet' };
    const target = await this.evseTarget(b.location_id ?? '', b.evse_uid);
    if ('reason' in target) return target;
    const { charge_point_id: chargePointId, evse_number: evse } = target.link;
    if (req.command === 'UNLOCK_CONNECTOR') {
      const connector = Number(b.connector_id);
      if (!Number.isInteger(connector) || connector < 1)
        return { reason: `connector ${b.connector_id ?? ''} is not an OCPP connector number` };
      return { chargePointId, command: { kind: 'unlock', evse_id: evse, connector_id: connector } };
    }
    const uid = b.token?.uid ?? '';
    const row = await this.chargePoints.find(chargePointId);
    const max = ID_TAG_MAX[row?.protocol ?? 'ocpp1.6'] ?? 20;
    if (uid.length > max)
      return { reason: `token uid longer than the ${max} characters the charger's OCPP version takes` };
    return { chargePointId, command: { kind: 'start', id_tag: uid, evse_id: evse, connector_id: null } };
  }
}

export function chargerCommands(services: PlatformServices): ChargerCommandPort {
  const mapping = new CommandMapping(
    new EvseLinkStore(services.db),
    new ChargePointStore(services.db),
    new SessionReader(services.db),
  );
  const { config, actors } = services;
  return {
    async execute(req): Promise<ChargerCommandAnswer> {
      const mapped = await mapping.of(req);
      if ('reason' in mapped) return { result: 'REJECTED', reason: mapped.reason, timeout_s: 0 };
      if (!(await actors.isPinned(addressOf(chargePointProtocol.kind, mapped.chargePointId))))
        return { result: 'REJECTED', reason: `charge point ${mapped.chargePointId} is offline`, timeout_s: 0 };
      const timeout = config.OCPI_COMMAND_TIMEOUT_S;
      const reply = await actors.ref(ocpiCommandProtocol, randomUUID()).ask({
        op: 'start',
        partner_key: req.partnerKey,
        version: req.version,
        command: req.command,
        response_url: req.body.response_url,
        charge_point_id: mapped.chargePointId,
        charger_command: mapped.command,
        timeout_s: timeout,
      });
      if (!reply?.accepted) return { result: 'REJECTED', reason: reply?.reason ?? 'not sent', timeout_s: 0 };
      return { result: 'ACCEPTED', reason: `sent to charge point ${mapped.chargePointId}`, timeout_s: timeout };
    },
  };
}
