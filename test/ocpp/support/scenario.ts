import {
  chargePointProtocol,
  type ChargePointState,
  type CommandAccepted,
} from '../../../actors/charge-point/protocol.js';
import type { ChargerCommand } from '../../../src/ocpp/domain.js';
import { connect, type TestCharger } from './charger.js';
import type { CsmsUnderTest, RegisteredChargePoint } from './csms.js';
import { eventually as poll } from '../../support/eventually.js';

/** A registered charger connected with its own key, speaking its registered protocol. */
export async function connectedCharger(
  csms: CsmsUnderTest,
  protocol: 'ocpp1.6' | 'ocpp2.0.1',
): Promise<{ cp: RegisteredChargePoint; charger: TestCharger }> {
  const cp = await csms.registerChargePoint(protocol);
  const charger = await connect({
    url: cp.ocpp_url,
    username: cp.username,
    password: cp.password,
    protocols: [protocol],
  });
  return { cp, charger };
}

/** A CSMS-to-charger command through the actor, as the OCPI command flow sends them. */
export function sendCommand(csms: CsmsUnderTest, id: string, command: ChargerCommand): Promise<CommandAccepted> {
  return csms.started.platform.services.actors.ref(chargePointProtocol, id).ask({ type: 'command', command });
}

export function actorState(csms: CsmsUnderTest, id: string): Promise<ChargePointState> {
  return csms.started.platform.services.actors.ref(chargePointProtocol, id).ask({ type: 'get' });
}

/** Polls until `check` returns a value (not undefined) or the time is up. */
export function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  return poll(check, { timeoutMs });
}
