import { RPCClient } from 'ocpp-rpc';

// ocpp-rpc's typings mark every option required although the library defaults them
type ClientOptions = ConstructorParameters<typeof RPCClient>[0];

/** A charger as an ocpp-rpc client, not connected yet, no reconnects. */
function rpcCharger(
  platformUrl: string,
  cp: { id: string; password: string },
  protocol: 'ocpp1.6' | 'ocpp2.0.1',
  strictMode: boolean,
): RPCClient {
  const options: Partial<ClientOptions> = {
    endpoint: `${platformUrl.replace(/^http/, 'ws')}/ocpp`,
    identity: cp.id,
    password: cp.password,
    protocols: [protocol],
    strictMode,
    reconnect: false,
  };
  return new RPCClient(options as ClientOptions);
}

/**
 * A charger as an independent OCPP client: ocpp-rpc in strict mode, which checks every frame the
 * CSMS sends against its own copy of the official schemas. Not connected yet; no reconnects.
 */
export const strictCharger = (
  platformUrl: string,
  cp: { id: string; password: string },
  protocol: 'ocpp1.6' | 'ocpp2.0.1',
): RPCClient => rpcCharger(platformUrl, cp, protocol, true);

/**
 * The same charger without strict mode: ocpp-rpc then sends what it is given, so a test can send
 * a call that breaks its schema and see the CALLERROR (thrown as an RPCError with `rpcErrorCode`).
 */
export const looseCharger = (
  platformUrl: string,
  cp: { id: string; password: string },
  protocol: 'ocpp1.6' | 'ocpp2.0.1',
): RPCClient => rpcCharger(platformUrl, cp, protocol, false);
