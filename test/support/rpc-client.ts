import { RPCClient } from 'ocpp-rpc';

// ocpp-rpc's typings mark every option required although the library defaults them
type ClientOptions = ConstructorParameters<typeof RPCClient>[0];

/**
 * A charger as an independent OCPP client: ocpp-rpc in strict mode, which checks every frame the
 * CSMS sends against its own copy of the official schemas. Not connected yet; no reconnects.
 */
export function strictCharger(
  platformUrl: string,
  cp: { id: string; password: string },
  protocol: 'ocpp1.6' | 'ocpp2.0.1',
): RPCClient {
  const options: Partial<ClientOptions> = {
    endpoint: `${platformUrl.replace(/^http/, 'ws')}/ocpp`,
    identity: cp.id,
    password: cp.password,
    protocols: [protocol],
    strictMode: true,
    reconnect: false,
  };
  return new RPCClient(options as ClientOptions);
}
