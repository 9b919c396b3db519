import { Agent, get, type IncomingMessage } from 'node:http';
import { expect } from 'chai';
import { embeddedEnvironment, type TestEnvironment } from '../support/platforms.js';
import type { ChargingSession } from '../../src/csms/session-store.js';
import { connect } from './support/charger.js';
import { API_KEY, startCsms, uniqueChargePointId, type CsmsUnderTest } from './support/csms.js';
import { v16 } from './support/messages.js';
import { connectedCharger, eventually } from './support/scenario.js';

interface ChargePointItem {
  id: string;
  protocol: string;
  online: boolean;
}

describe('/v1 management API for charge points and sessions', () => {
  let csms: CsmsUnderTest;
  before(async () => {
    csms = await startCsms();
  });
  after(async () => csms.stop());

  it('POST /charge-points answers 201 with the OCPP URL and the key, which is not shown again', async () => {
    const id = uniqueChargePointId('NEW');
    const res = await csms.api<{ id: string; protocol: string; ocpp_url: string; username: string; password: string }>(
      'POST',
      '/v1/charge-points',
      {
        id,
        protocol: 'ocpp2.0.1',
      },
    );
    expect(res.status).to.equal(201);
    expect(res.headers.get('location')).to.equal(`/v1/charge-points/${id}`);
    expect(res.body).to.include({ id, protocol: 'ocpp2.0.1', username: id });
    expect(res.body.ocpp_url).to.equal(`${csms.url.replace(/^http/, 'ws')}/ocpp/${id}`);
    expect(res.body.password).to.have.length.within(16, 40);
    const again = await csms.api<Record<string, unknown>>('GET', `/v1/charge-points/${id}`);
    expect(again.status).to.equal(200);
    expect(JSON.stringify(again.body)).not.to.contain(res.body.password);
    expect(again.body).to.include({ id, protocol: 'ocpp2.0.1', online: false });
  });

  it('generates an id when none is given, and refuses a duplicate with 409', async () => {
    const res = await csms.api<{ id: string }>('POST', '/v1/charge-points', { protocol: 'ocpp1.6' });
    expect(res.status).to.equal(201);
    expect(res.body.id).to.match(/^CP-/);
    const dup = await csms.api<{ error: { code: string } }>('POST', '/v1/charge-points', {
      id: res.body.id,
      protocol: 'ocpp1.6',
    });
    expect(dup.status).to.equal(409);
    expect(dup.body.error.code).to.equal('conflict');
  });

  it('validates bodies and queries with 422 detail entries', async () => {
    const res = await csms.api<{ detail: Array<{ loc: unknown[]; type: string }> }>('POST', '/v1/charge-points', {
      protocol: 'ocpp3',
    });
    expect(res.status).to.equal(422);
    expect(res.body.detail[0]?.loc[0]).to.equal('body');
    // a colon cannot be part of an HTTP Basic user name, so it cannot be part of an identity
    expect((await csms.api('POST', '/v1/charge-points', { id: 'CP:1', protocol: 'ocpp1.6' })).status).to.equal(422);
    // a URL resolves "." and ".." away: such a charger could never reach its OCPP URL
    for (const id of ['.', '..']) {
      const dots = await csms.api<{ detail: Array<{ msg: string }> }>('POST', '/v1/charge-points', {
        id,
        protocol: 'ocpp1.6',
      });
      expect(dots.status, id).to.equal(422);
      // why, not the pattern's text
      expect(dots.body.detail[0]?.msg).to.contain('not "." or ".."');
    }
    const start = await csms.api<{ detail: unknown[] }>('POST', '/v1/charge-points/X/remote-start', { id_tag: '' });
    expect(start.status).to.equal(422);
    // a tag of spaces only is no card (the console had sent a charger the token " ")
    for (const id_tag of [' ', '   '])
      expect((await csms.api('POST', '/v1/charge-points/X/remote-start', { id_tag })).status, `'${id_tag}'`).to.equal(
        422,
      );
    expect((await csms.api('GET', '/v1/charge-points?online=perhaps')).status).to.equal(422);
    // a value that is none of a union's constants: one entry that names them all
    type Entry = { loc: unknown[]; type: string; msg: string; ctx: { expected?: unknown } };
    const reset = await csms.api<{ detail: Entry[] }>('POST', '/v1/charge-points/X/reset', { type: 'medium' });
    expect(reset.status).to.equal(422);
    const literal = reset.body.detail.filter((d) => d.type === 'literal_error');
    expect(literal).to.have.length(1);
    // and only it: not also "must match a schema in anyOf" at the same place
    expect(reset.body.detail.map((d) => d.type)).to.deep.equal(['literal_error']);
    // a nullable one: not also "Input should be a valid null"
    const policy = await csms.api<{ detail: Entry[] }>('PUT', '/v1/charge-points/X/boot-policy', { policy: 'pending' });
    expect(policy.status).to.equal(422);
    expect(policy.body.detail.map((d) => `${d.loc.join('.')} ${d.type}`)).to.deep.equal(['body.policy literal_error']);
    expect(literal[0]?.ctx.expected).to.deep.equal(['soft', 'hard']);
    // a bad query and a bad body: one 422 names both (a bad query hid the body's errors)
    const both = await csms.api<{ detail: Entry[] }>('POST', '/v1/charge-points/X/reset?wait_ms=soon', {
      type: 'medium',
    });
    expect(both.status).to.equal(422);
    expect(both.body.detail.map((d) => `${d.loc.join('.')} ${d.type}`)).to.deep.equal([
      'query.wait_ms int_type',
      'body.type literal_error',
    ]);
    expect(literal[0]?.msg).to.equal('must be one of "soft", "hard"');
    // a status that is no connector status is a mistake, not a filter that matches nothing
    const bogus = await csms.api<{ detail: Array<{ msg: string }> }>('GET', '/v1/charge-points?status=bogus');
    expect(bogus.status).to.equal(422);
    expect(bogus.body.detail[0]?.msg).to.contain('must be a connector status: Available, Preparing');
    expect((await csms.api('GET', '/v1/charge-points?status=suspendedEV')).status).to.equal(200);
    // numbers a charger is sent are OCPP's 32-bit integers: a larger one is refused here, not sent to fail later
    for (const [op, body, field] of [
      ['remote-start', { id_tag: 'TAG', evse_id: 2 ** 31 }, 'evse_id'],
      ['remote-stop', { transaction_id: 1e300 }, 'transaction_id'],
      ['remote-stop', { transaction_id: 'T'.repeat(37) }, 'transaction_id'],
      ['update-firmware', { location: 'https://example.com/fw.bin', retries: 2 ** 31 }, 'retries'],
      ['cancel-reservation', { reservation_id: -(2 ** 31) - 1 }, 'reservation_id'],
    ] as const) {
      const res = await csms.api<{ detail: Array<{ loc: unknown[] }> }>('POST', `/v1/charge-points/X/${op}`, body);
      expect(res.status, `${op} ${JSON.stringify(body)}`).to.equal(422);
      expect(
        res.body.detail.map((d) => d.loc.join('.')),
        op,
      ).to.include(`body.${field}`);
    }
  });

  it('reads a body as JSON only: another Content-Type is a 422 that says so, never a body ignored', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    const send = async (path: string, type: string | undefined, body: unknown = { transaction_id: '42' }) => {
      const res = await fetch(`${csms.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, ...(type ? { 'content-type': type } : {}) },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { detail: Array<{ type: string; msg: string }> } };
    };
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', undefined]) {
      // was 422 "Input should be a valid object", and a remote stop ran without the transaction named
      for (const path of ['/v1/charge-points', `/v1/charge-points/${cp.id}/remote-stop`]) {
        const res = await send(path, type);
        expect(res.status, `${path} ${type}`).to.equal(422);
        expect(res.body.detail[0]?.type).to.equal('content_type');
        expect(res.body.detail[0]?.msg).to.contain('application/json');
      }
    }
    const created = await send('/v1/charge-points', 'application/json; charset=utf-8', {
      id: uniqueChargePointId(),
      protocol: 'ocpp1.6',
    });
    expect(created.status).to.equal(201);
  });

  it('answers a large bad body with one bounded entry per place, not an echo larger than the body', async () => {
    type Detail = { loc: unknown[]; type: string; input: unknown; ctx: Record<string, unknown> };
    const big = { blob: 'x'.repeat(200_000) };
    const res = await csms.api<{ detail: Detail[] }>('POST', '/v1/charge-points', {
      id: 'CP-BIG',
      protocol: 'ocpp1.6',
      extra: big,
      note: 'y'.repeat(5_000),
    });
    expect(res.status).to.equal(422);
    // was "schema is false" and extra_forbidden for each field, each with the whole input: 409 KB
    expect(res.body.detail.map((d) => [d.loc.join('.'), d.type])).to.deep.equal([
      ['body.extra', 'extra_forbidden'],
      ['body.note', 'extra_forbidden'],
    ]);
    const [extra, note] = res.body.detail;
    expect(extra).to.include({ input: null });
    expect(extra?.ctx.input_bytes).to.be.greaterThan(200_000);
    expect(note?.input).to.equal(`${'y'.repeat(200)}…`);
    expect(note?.ctx.input_length).to.equal(5_000);
    expect(JSON.stringify(res.body).length).to.be.below(2_000);
    // a body with hundreds of bad items: the first ones (at most 50)
    const many = await csms.api<{ detail: Detail[] }>('POST', '/v1/charge-points/X/send-local-list', {
      update: 'full',
      entries: Array.from({ length: 400 }, () => ({ id_tag: '', status: 'Accepted' })),
    });
    expect(many.status).to.equal(422);
    expect(many.body.detail.length).to.be.within(1, 50);
    expect(many.body.detail[0]?.loc).to.deep.equal(['body', 'entries', 0, 'id_tag']);
  });

  it("refuses the charger's password as a variable or configuration key (PUT /password sets it), and a connector without its EVSE", async () => {
    const v201 = await csms.registerChargePoint('ocpp2.0.1');
    const v16 = await csms.registerChargePoint('ocpp1.6');
    const press = (id: string, op: string, body: unknown) =>
      csms.api<{ error?: string; detail?: unknown }>('POST', `/v1/charge-points/${id}/${op}`, body);
    const set = await press(v201.id, 'set-variables', {
      variables: [{ component: 'SecurityCtrlr', variable: 'BasicAuthPassword', value: 'a-new-password-1234' }],
    });
    expect(set.status).to.equal(422);
    expect(JSON.stringify(set.body)).to.include('/password');
    const lower = await press(v201.id, 'set-variables', {
      variables: [{ component: 'securityctrlr', variable: 'basicauthpassword', value: 'a-new-password-1234' }],
    });
    expect(lower.status).to.equal(422);
    const key = await press(v16.id, 'change-configuration', { key: 'AuthorizationKey', value: '41424344' });
    expect(key.status).to.equal(422);
    expect(JSON.stringify(key.body)).to.include('/password');
    for (const op of ['get-variables', 'set-variables']) {
      const res = await press(v201.id, op, {
        variables: [{ component: 'Connector', variable: 'Available', connector_id: 1, value: 'x' }].map((v) =>
          op === 'get-variables' ? { component: v.component, variable: v.variable, connector_id: v.connector_id } : v,
        ),
      });
      expect(res.status, op).to.equal(422);
      expect(JSON.stringify(res.body), op).to.include('evse_id');
    }
  });

  it('refuses a profile valid_to before its valid_from, a log window that ends before it starts, and an id tag listed twice', async () => {
    const cp = await csms.registerChargePoint('ocpp2.0.1');
    const press = (op: string, body: unknown) => csms.api('POST', `/v1/charge-points/${cp.id}/${op}`, body);
    const profile = {
      id: 1,
      stack_level: 0,
      purpose: 'tx_default',
      kind: 'absolute',
      valid_from: '2027-01-02T00:00:00Z',
      valid_to: '2027-01-01T00:00:00Z',
      schedule: { rate_unit: 'A', periods: [{ start_s: 0, limit: 16 }] },
    };
    const window = await press('set-charging-profile', { evse_id: 1, profile });
    expect(window.status).to.equal(422);
    expect(JSON.stringify(window.body)).to.include('valid_from');
    const recurring = await press('set-charging-profile', {
      evse_id: 1,
      profile: {
        ...profile,
        kind: 'recurring',
        valid_to: '2027-02-01T00:00:00Z',
        schedule: { ...profile.schedule, start: '2027-01-02T00:00:00Z' },
      },
    });
    expect(recurring.status).to.equal(422);
    expect(JSON.stringify(recurring.body)).to.include('needs recurrency');
    const logs = await press('upload-log', {
      location: 'https://logs.example.com/up',
      since: '2027-01-02T00:00:00Z',
      until: '2027-01-01T00:00:00Z',
    });
    expect(logs.status).to.equal(422);
    expect(JSON.stringify(logs.body)).to.include('since_after_until');
    const twice = await press('send-local-list', {
      update: 'full',
      entries: [
        { id_tag: 'CARD-1', status: 'Accepted' },
        { id_tag: 'card-1', status: 'Blocked' },
      ],
    });
    expect(twice.status).to.equal(422);
    expect(JSON.stringify(twice.body)).to.include('duplicate_id_tag');
  });

  it('needs the operator key', async () => {
    expect((await csms.api('GET', '/v1/charge-points', undefined, { key: null })).status).to.equal(401);
    expect((await csms.api('GET', '/v1/sessions', undefined, { key: 'wrong-key-wrong-key' })).status).to.equal(401);
    expect((await csms.api('GET', '/v1/charge-points', undefined, { key: API_KEY })).status).to.equal(200);
  });

  it('answers 404 for an unknown charge point', async () => {
    const res = await csms.api<{ error: { code: string } }>('GET', '/v1/charge-points/NOT-THERE');
    expect(res.status).to.equal(404);
    expect(res.body.error.code).to.equal('not_found');
  });

  it('filters the list by protocol and by online state, and pages it', async () => {
    const { cp: online16, charger } = await connectedCharger(csms, 'ocpp1.6');
    const offline201 = await csms.registerChargePoint('ocpp2.0.1');
    const only201 = await csms.api<ChargePointItem[]>('GET', '/v1/charge-points?protocol=ocpp2.0.1&limit=1000');
    expect(only201.body.every((c) => c.protocol === 'ocpp2.0.1')).to.equal(true);
    expect(only201.body.map((c) => c.id)).to.include(offline201.id);
    const online = await csms.api<ChargePointItem[]>('GET', '/v1/charge-points?online=true');
    expect(online.body.map((c) => c.id)).to.deep.equal([online16.id]);
    const offline = await csms.api<ChargePointItem[]>('GET', '/v1/charge-points?online=false&limit=1000');
    expect(offline.body.map((c) => c.id))
      .to.include(offline201.id)
      .and.not.include(online16.id);
    const page = await csms.api<ChargePointItem[]>('GET', '/v1/charge-points?protocol=ocpp2.0.1&limit=1');
    expect(page.body).to.have.length(1);
    expect(Number(page.headers.get('x-total-count'))).to.be.above(1);
    expect(page.headers.get('link')).to.contain('offset=1').and.contain('protocol=ocpp2.0.1');
    await charger.close();
  });

  it('streams change events: a charger coming online and its status change', async () => {
    const res = await fetch(`${csms.url}/v1/events`, { headers: { Authorization: `Bearer ${API_KEY}` } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.contain('text/event-stream');
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const { cp, charger } = await connectedCharger(csms, 'ocpp2.0.1');
    await charger.call('StatusNotification', {
      timestamp: new Date().toISOString(),
      connectorStatus: 'Available',
      evseId: 1,
      connectorId: 1,
    });
    let text = '';
    const wanted = [
      `"charge_point_id":"${cp.id}","online":true`,
      `event: charge-point\ndata: {"type":"charge-point","charge_point_id":"${cp.id}"}`,
    ];
    while (!wanted.every((w) => text.includes(w))) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    expect(
      wanted.every((w) => text.includes(w)),
      text,
    ).to.equal(true);
    await reader.cancel();
    await charger.close();
  });

  it('lists the operations in the OpenAPI document', async () => {
    const res = await fetch(`${csms.url}/openapi.json`);
    const doc = (await res.json()) as { paths: Record<string, unknown> };
    for (const p of [
      '/v1/charge-points',
      '/v1/charge-points/{id}',
      '/v1/sessions',
      '/v1/charge-points/{id}/remote-start',
      '/v1/charge-points/{id}/remote-stop',
    ]) {
      expect(doc.paths, p).to.have.property(p);
    }
  });

  it('serves the dashboard page without the key (it asks the operator for it)', async () => {
    const res = await fetch(`${csms.url}/dashboard`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.contain('text/html');
    // the script is a file of its own (the page's CSP refuses inline scripts)
    expect(await res.text()).to.contain('src="/dashboard/console.js"');
    const script = await fetch(`${csms.url}/dashboard/console.js`);
    expect(script.headers.get('content-type')).to.contain('text/javascript');
    expect(await script.text()).to.contain('/v1/charge-points');
  });
});

describe('sessions survive a restart of the service', () => {
  let env: TestEnvironment;
  before(async () => {
    env = await embeddedEnvironment({ CSMS_API_KEY: API_KEY });
  });
  after(async () => env.cleanup());

  it('a session started before the restart is listed after it, and its charger can finish it', async () => {
    const first = await startCsms({}, env);
    const cp = await first.registerChargePoint('ocpp1.6');
    let charger = await connect({
      url: cp.ocpp_url,
      username: cp.username,
      password: cp.password,
      protocols: ['ocpp1.6'],
    });
    const { transactionId } = await charger.call<{ transactionId: number }>(
      'StartTransaction',
      v16.start({ meterStart: 0 }),
    );
    await charger.call('MeterValues', v16.meterValues(1, transactionId, 800));
    await first.stop();
    expect(await charger.closed).to.equal(1012);

    const second = await startCsms({}, env);
    const listed = await second.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${cp.id}`);
    expect(listed.body.map((s) => [s.status, s.energy_wh])).to.deep.equal([['ACTIVE', 800]]);
    const url = `${second.url.replace(/^http/, 'ws')}/ocpp/${cp.id}`;
    charger = await connect({ url, username: cp.username, password: cp.password, protocols: ['ocpp1.6'] });
    await charger.call('StopTransaction', v16.stop(transactionId, 1500));
    const done = await eventually(async () => {
      const s = (await second.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${cp.id}`)).body[0];
      return s?.status === 'COMPLETED' ? s : undefined;
    });
    expect(done.energy_wh).to.equal(1500);
    await charger.close();
    await second.stop();
  });
});

describe('the event stream of a process that stops', function () {
  this.timeout(20_000);

  it('ends at once, and one opened again on a kept-alive connection is 503: the console does not say live through the drain', async () => {
    const csms = await startCsms();
    // one socket, kept alive: the second request goes on the first one's connection, as a browser's does
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const events = (): Promise<IncomingMessage> =>
      new Promise((resolve, reject) => {
        get(`${csms.url}/v1/events`, { agent, headers: { Authorization: `Bearer ${API_KEY}` } }, resolve).on(
          'error',
          reject,
        );
      });
    const first = await events();
    expect(first.statusCode).to.equal(200);
    const ended = new Promise((resolve) => first.on('end', resolve));
    first.resume();
    const stopping = csms.stop();
    await ended;
    const again = await events().catch((err: unknown) => err);
    const answer = again instanceof Error ? 'refused' : (again as IncomingMessage).statusCode;
    if (!(again instanceof Error)) (again as IncomingMessage).resume();
    expect(answer).to.be.oneOf([503, 'refused']);
    await stopping;
    agent.destroy();
  });
});
