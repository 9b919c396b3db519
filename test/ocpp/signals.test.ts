import { expect } from 'chai';
import { createRPCError, type RPCClient } from 'ocpp-rpc';
import { WebSocket } from 'ws';
import { csmsModule } from '../../src/csms/module.js';
import { createLogger } from '../../src/logger.js';
import { waitFor } from '../support/eventually.js';
import {
  embeddedEnvironment,
  startPlatform,
  type StartedPlatform,
  type TestEnvironment,
} from '../support/platforms.js';
import { looseCharger, strictCharger } from '../support/rpc-client.js';
import { API_KEY, apiClient, uniqueChargePointId, type RegisteredChargePoint } from './support/csms.js';
import { v16, v201 } from './support/messages.js';
import { encodeFrame, RawClient } from './support/raw-socket.js';

type Line = Record<string, unknown>;

/**
 * The signals of docs/OPERATIONS.md: the OCPP endpoint's log lines (captured from the platform's
 * own pino logger) and the metrics /metrics serves, moved by real chargers (ocpp-rpc) against a
 * real server on port 0.
 */
describe('OCPP signals: log lines and metrics an on-call person reads', function () {
  this.timeout(30_000);
  let env: TestEnvironment;
  let started: StartedPlatform;
  let url: string;
  const lines: Line[] = [];
  const api = () => apiClient(url);

  before(async () => {
    env = await embeddedEnvironment({ CSMS_API_KEY: API_KEY, LOG_LEVEL: 'info', OCPP_LOGIN_FAILURES: '100' });
    const capture = { write: (s: string) => void lines.push(JSON.parse(s) as Line) };
    started = await startPlatform(
      env,
      [
        csmsModule({
          pingIntervalMs: 60_000,
          callTimeoutMs: 5_000,
          logLimits: { linesPerKey: 2, linesTotal: 50, intervalMs: 2000 },
        }),
      ],
      { log: createLogger('info', {}, capture) },
    );
    url = started.platform.url;
  });
  after(async () => {
    await started.stop();
    await env.cleanup();
  });

  const register = async (protocol: 'ocpp1.6' | 'ocpp2.0.1'): Promise<RegisteredChargePoint> => {
    const res = await api()<RegisteredChargePoint>('POST', '/v1/charge-points', {
      id: uniqueChargePointId(),
      protocol,
    });
    expect(res.status).to.equal(201);
    return res.body;
  };
  const linesOf = (msg: string, id: string): Line[] => lines.filter((l) => l.msg === msg && l.charge_point === id);
  const scrape = async (): Promise<string> => {
    const res = await fetch(`${url}/metrics`);
    expect(res.status).to.equal(200);
    return res.text();
  };
  /** the value of one sample (`name{labels}` as the text format writes it), 0 when absent */
  const sample = (text: string, series: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : 0;
  };
  const booted = async (cp: RegisteredChargePoint, protocol: 'ocpp1.6' | 'ocpp2.0.1'): Promise<RPCClient> => {
    const client = strictCharger(url, cp, protocol);
    await client.connect();
    await client.call('BootNotification', protocol === 'ocpp1.6' ? v16.boot() : v201.boot());
    return client;
  };

  it('logs connect, boot and disconnect with the charger id, and counts connected chargers by protocol up then down', async () => {
    const before = await scrape();
    const [a, b] = [await register('ocpp1.6'), await register('ocpp2.0.1')];
    const [ca, cb] = [await booted(a, 'ocpp1.6'), await booted(b, 'ocpp2.0.1')];

    const during = await scrape();
    for (const protocol of ['ocpp1.6', 'ocpp2.0.1'])
      expect(sample(during, `ocpp_connected_chargers{protocol="${protocol}"}`), protocol).to.equal(
        sample(before, `ocpp_connected_chargers{protocol="${protocol}"}`) + 1,
      );
    expect(
      sample(during, 'ocpp_messages_total{direction="in",action="BootNotification",outcome="result"}'),
    ).to.be.at.least(2);
    expect(linesOf('charger connected', a.id)[0]).to.include({ protocol: 'ocpp1.6', address: '127.0.0.1', level: 30 });
    expect(linesOf('charger connected', b.id)[0]).to.include({ protocol: 'ocpp2.0.1' });
    expect(linesOf('charger booted', a.id)[0]).to.include({
      vendor: 'Alfen',
      model: 'Eve Single',
      firmware: '4.1.0',
      status: 'Accepted',
    });
    expect(linesOf('charger booted', b.id)[0]).to.include({ vendor: 'ABB', model: 'Terra AC', status: 'Accepted' });

    await ca.close({ code: 1000, reason: 'bye' });
    await cb.close({ code: 1000 });
    await waitFor('both disconnect lines', async () => linesOf('charger disconnected', b.id).length === 1, 5000);
    await waitFor('a disconnect line', async () => linesOf('charger disconnected', a.id).length === 1, 5000);
    expect(linesOf('charger disconnected', a.id)[0]).to.include({
      protocol: 'ocpp1.6',
      code: 1000,
      reason: 'bye',
      closed_by: 'charger',
    });
    expect(linesOf('charger disconnected', a.id)[0]).to.have.property('duration_s').that.is.a('number');
    const after = await scrape();
    for (const protocol of ['ocpp1.6', 'ocpp2.0.1'])
      expect(sample(after, `ocpp_connected_chargers{protocol="${protocol}"}`), protocol).to.equal(
        sample(before, `ocpp_connected_chargers{protocol="${protocol}"}`),
      );
    // every line is one JSON object with the charger id; no password anywhere
    const all = JSON.stringify(lines);
    expect(all).not.to.contain(a.password);
    expect(all).not.to.contain(b.password);
  });

  it('logs the close of a charger that sent an invalid frame as ours, with the code it was sent', async () => {
    const cp = await register('ocpp2.0.1');
    const raw = await RawClient.upgraded(Number(new URL(url).port), `/ocpp/${cp.id}`, {
      protocol: 'ocpp2.0.1',
      user: cp.id,
      password: cp.password,
    });
    // invalid UTF-8 in a text frame: ws closes with 1007; the charger never sent a close of its own
    raw.write(encodeFrame({ opcode: 1, payload: Buffer.from([0x5b, 0xc3, 0x28, 0x5d]) }));
    expect(await raw.closeCode()).to.equal(1007);
    raw.destroy();
    await waitFor('the disconnect line', async () => linesOf('charger disconnected', cp.id).length === 1, 5000);
    expect(linesOf('charger disconnected', cp.id)[0]).to.include({ code: 1007, closed_by: 'csms' });
  });

  it('logs refused logins with their reason and address, never the password tried, limited per address', async () => {
    const cp = await register('ocpp1.6');
    const attempt = (id: string, password: string | undefined, protocols: string[]): Promise<number> =>
      new Promise((resolve) => {
        const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ocpp/${id}`, protocols, {
          headers: password ? { Authorization: `Basic ${Buffer.from(`${id}:${password}`).toString('base64')}` } : {},
        });
        ws.on('unexpected-response', (_req, res) => {
          resolve(res.statusCode ?? 0);
          ws.terminate();
        });
        ws.on('open', () => {
          resolve(101);
          ws.close();
        });
        // the client's own refusal of the answer (a handshake that named no subprotocol): 0
        ws.on('error', () => resolve(0));
      });
    const wrong = 'not-the-password-0123456789';
    expect(await attempt(cp.id, wrong, ['ocpp1.6'])).to.equal(401);
    await waitFor('the refusal line', async () => linesOf('charger login refused', cp.id).length === 1, 2000);
    expect(linesOf('charger login refused', cp.id)[0]).to.include({
      reason: 'bad_password',
      status: 401,
      address: '127.0.0.1',
      level: 40,
    });
    expect(JSON.stringify(lines)).not.to.contain(wrong);

    // the limit: 2 lines per address per 2 s here; the next line after it says what was dropped
    await new Promise((r) => setTimeout(r, 2100));
    const ghost = uniqueChargePointId('GHOST');
    for (let i = 0; i < 5; i++) expect(await attempt(`${ghost}-${i}`, 'whatever-password', ['ocpp1.6'])).to.equal(401);
    const ghosts = lines.filter((l) => l.msg === 'charger login refused' && String(l.charge_point).startsWith(ghost));
    expect(ghosts.map((l) => l.reason)).to.deep.equal(['unknown', 'unknown']);
    await new Promise((r) => setTimeout(r, 2100));
    // the charger's own password, but no subprotocol this CSMS speaks
    // (the handshake completes and the socket is closed at once: the ws client says the server named none)
    expect(await attempt(cp.id, cp.password, ['ocpp1.5'])).to.equal(0);
    const noProtocol = linesOf('charger login refused', cp.id).at(-1);
    expect(noProtocol).to.include({ reason: 'no_subprotocol', status: 101, suppressed: 3 });
    expect(JSON.stringify(lines)).not.to.contain(cp.password);
  });

  it('logs and counts CALLERRORs sent (limited per charger) and received, and times calls to chargers', async () => {
    const cp = await register('ocpp1.6');
    const client = looseCharger(url, cp, 'ocpp1.6');
    await client.connect();
    await client.call('BootNotification', v16.boot());
    const before = await scrape();
    for (let i = 0; i < 3; i++) {
      const err = await client.call('MadeUpAction', {}).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.have.property('rpcErrorCode', 'NotImplemented');
    }
    const sent = linesOf('CALLERROR sent to charger', cp.id);
    expect(sent).to.have.length(2);
    expect(sent[0]).to.include({ action: 'MadeUpAction', code: 'NotImplemented', cause: 'charger', level: 40 });

    client.handle('Reset', () => Promise.resolve({ status: 'Accepted' }));
    const reset = await api()('POST', `/v1/charge-points/${cp.id}/reset`, { type: 'soft' });
    expect(reset.status).to.equal(200);
    client.handle('ClearCache', () => {
      throw createRPCError('NotSupported', 'no cache here');
    });
    await api()('POST', `/v1/charge-points/${cp.id}/clear-cache`, {});
    expect(linesOf('CALLERROR received from charger', cp.id)[0]).to.include({
      action: 'ClearCache',
      code: 'NotSupported',
      description: 'no cache here',
    });

    const after = await scrape();
    const grew = (series: string): number => sample(after, series) - sample(before, series);
    expect(grew('ocpp_callerrors_total{direction="sent",code="NotImplemented",cause="charger"}')).to.equal(3);
    // an action no schema knows is counted as `unknown`, never under the name the charger made up
    expect(grew('ocpp_messages_total{direction="in",action="unknown",outcome="error"}')).to.equal(3);
    expect(after).not.to.contain('MadeUpAction');
    expect(grew('ocpp_callerrors_total{direction="received",code="NotSupported",cause="charger"}')).to.equal(1);
    expect(grew('ocpp_messages_total{direction="out",action="Reset",outcome="result"}')).to.equal(1);
    expect(grew('ocpp_messages_total{direction="out",action="ClearCache",outcome="error"}')).to.equal(1);
    expect(grew('ocpp_call_duration_seconds_count{action="Reset"}')).to.equal(1);
    expect(sample(after, 'ocpp_call_duration_seconds_bucket{le="+Inf",action="Reset"}')).to.be.at.least(1);
    // no label names a charger
    expect(after).not.to.contain(cp.id);
    await client.close();
  });

  it('serves the outbox and pricing gauges (empty outbox: no partner series, pricing queue at 0)', async () => {
    const text = await scrape();
    expect(text).to.contain('# TYPE ocpi_outbox_pending gauge');
    expect(text).to.contain('# TYPE ocpi_outbox_dead_letters gauge');
    expect(text).to.contain('# TYPE ocpi_outbox_oldest_pending_age_seconds gauge');
    expect(sample(text, 'pricing_queue_depth{state="waiting"}')).to.equal(0);
  });
});
