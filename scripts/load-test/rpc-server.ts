import type { AddressInfo } from 'node:net';
import { RPCServer } from 'ocpp-rpc';
import { BENCH_ACTIONS, trivialAnswer } from './trivial-answers.js';

/**
 * The library baseline of the load test: an `ocpp-rpc` server in strict mode (every CALL and
 * every result checked against the library's bundled OCPP 1.6 schemas) whose handlers answer
 * trivially and persist nothing. Any identity and password are accepted.
 */
// ocpp-rpc's typings mark every option required although the library defaults them
type ServerOptions = ConstructorParameters<typeof RPCServer>[0];
const options: Partial<ServerOptions> = { protocols: ['ocpp1.6'], strictMode: true };
const server = new RPCServer(options as ServerOptions);
server.on('client', (client: { handle(method: string, handler: () => unknown): void }) => {
  for (const action of BENCH_ACTIONS) client.handle(action, () => trivialAnswer(action));
});

async function main(): Promise<void> {
  const http = await server.listen(0, '127.0.0.1');
  // listen(0) on a TCP host: address() is an AddressInfo, not a pipe name
  process.send?.({ type: 'listening', port: (http.address() as AddressInfo).port });
}

void main();
process.on('disconnect', () => process.exit(0));
