import { expect } from 'chai';
import nock from 'nock';
import { platformModules } from '../../src/modules.js';
import { API_KEY, OcpiApi, base64, type RegisteredPartner } from '../support/ocpi-harness.js';
import { loopbackPartner, type FakePartner } from '../support/ocpi-partners.js';
import { operationsOf, sample, type Operation } from '../support/openapi-doc.js';
import {
  embeddedEnvironment,
  startPlatform,
  type StartedPlatform,
  type TestEnvironment,
} from '../support/platforms.js';

type Json = Record<string, unknown>;

/**
 * /openapi.json against the code (issue 14, API docs): operationIds a code generator can use,
 * shared schemas that resolve, the error body of each surface on every documented error, and,
 * route by route, every status the route answers to a request without or with a bad token, with
 * a bad path parameter or body, and with a well-formed request naming objects that do not
 * exist, documented for that route.
 */
describe('/openapi.json: operationIds, components and the statuses each route answers (embedded)', function () {
  this.timeout(120_000);
  let env: TestEnvironment;
  let p: StartedPlatform;
  let doc: Json;
  let cpo: RegisteredPartner;
  let emsp: RegisteredPartner;
  const partners: FakePartner[] = [];

  before(async () => {
    env = await embeddedEnvironment({ CSMS_API_KEY: API_KEY, PARTNER_URL_POLICY: 'loopback' });
    p = await startPlatform(env, platformModules());
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
    const api = new OcpiApi({
      mode: 'embedded',
      urls: [p.platform.url],
      platform: p,
      partner: async (token, versions) => {
        const partner = await loopbackPartner(token, versions);
        partners.push(partner);
        return partner;
      },
      stop: async () => undefined,
    });
    cpo = await api.register('CPO');
    emsp = await api.register('EMSP');
    doc = (await (await fetch(`${p.platform.url}/openapi.json`)).json()) as Json;
  });

  after(async () => {
    nock.cleanAll();
    nock.enableNetConnect();
    await Promise.all(partners.splice(0).map((x) => x.close()));
    await p?.stop();
    await env?.cleanup();
  });

  it('names every operation with a unique camelCase operationId, distinct per OCPI mount', () => {
    const ids = operationsOf(doc).map((op) => op.operationId);
    expect(ids.length).to.be.greaterThan(100);
    for (const id of ids) expect(id, id).to.match(/^[a-z][A-Za-z0-9]*$/);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).to.deep.equal([]);
    expect(ids).to.include.members([
      'listChargePoints',
      'getChargePoint',
      'postChargePointReset',
      'cpo221ListLocations',
      'cpo211ListLocations',
      'emsp221GetLocationEvse',
      'overview221ListVersions',
    ]);
  });

  it('holds the shared schemas and the error bodies of each surface in components, every $ref resolving', () => {
    const schemas = (doc.components as { schemas: Record<string, unknown> }).schemas;
    expect(schemas).to.include.keys('Error', 'OcpiError', 'HTTPValidationError', 'Location221', 'ChargePointView');
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).to.be.greaterThan(100);
    for (const ref of new Set(refs)) {
      const name = ref.replace(/^"\$ref":"#\/components\/schemas\//, '').replace(/"$/, '');
      expect(schemas, ref).to.have.property(name);
    }
    const paths = doc.paths as Record<string, Record<string, { responses: Record<string, Json> }>>;
    for (const [path, item] of Object.entries(paths))
      for (const [method, op] of Object.entries(item))
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) < 400) continue;
          const expected = status === '422' ? 'HTTPValidationError' : path.startsWith('/ocpi') ? 'OcpiError' : 'Error';
          expect(JSON.stringify(response.content), `${method} ${path} ${status}`).to.contain(
            `#/components/schemas/${expected}"`,
          );
        }
  });

  /** partner CPOs call our eMSP mounts, partner eMSPs the others */
  function partnerFor(op: Operation): RegisteredPartner {
    return op.template.startsWith('/ocpi/emsp/') ? cpo : emsp;
  }

  function goodAuth(op: Operation): Record<string, string> {
    if (op.security === 'bearer') return { Authorization: `Bearer ${API_KEY}` };
    if (op.security !== 'ocpiToken') return {};
    const token = partnerFor(op).token;
    return { Authorization: `Token ${op.template.includes('/2.1.1') ? token : base64(token)}` };
  }

  /** The path with the caller's party and ids no object has (`bad` replaces one parameter). */
  function pathOf(op: Operation, bad?: string): string {
    const party = partnerFor(op).party;
    const values: Record<string, string> = {
      country_code: party.country_code,
      party_id: party.party_id,
      version: '9.9.9',
      command: 'START_SESSION',
      module: 'locations',
    };
    return op.template.replace(/\{([^}]+)\}/g, (_m, name: string) =>
      name === bad ? 'x'.repeat(300) : (values[name] ?? 'UNKNOWN1'),
    );
  }

  interface Probe {
    what: string;
    path: string;
    headers: Record<string, string>;
    body?: string;
  }

  function probesFor(op: Operation): Probe[] {
    const auth = goodAuth(op);
    const json = { 'Content-Type': 'application/json' };
    const plausible = op.body ? JSON.stringify(sample(op.body)) : undefined;
    const withBody = (body: string | undefined) =>
      body !== undefined && op.method !== 'GET' && op.method !== 'DELETE' ? { body } : {};
    const probes: Probe[] = [];
    if (op.security) {
      probes.push({ what: 'no Authorization', path: pathOf(op), headers: json, ...withBody(plausible) });
      const bad = op.security === 'bearer' ? 'Bearer not-the-key' : 'Token not-a-token';
      probes.push({ what: 'bad token', path: pathOf(op), headers: { ...json, Authorization: bad } });
    }
    for (const param of op.pathParams)
      probes.push({
        what: `bad path ${param}`,
        path: pathOf(op, param),
        headers: { ...json, ...auth },
        ...withBody(plausible),
      });
    probes.push({ what: 'bad body', path: pathOf(op), headers: { ...json, ...auth }, ...withBody('{"a":') });
    if (op.body) probes.push({ what: 'wrong body', path: pathOf(op), headers: { ...json, ...auth }, ...withBody('7') });
    probes.push({ what: 'unknown ids', path: pathOf(op), headers: { ...json, ...auth }, ...withBody(plausible) });
    return probes;
  }

  it('documents, for every route, each status it answers (no token, bad token, bad parameter or body, unknown ids)', async () => {
    const ops = operationsOf(doc)
      // a credentials call with a valid token may end the partners' links: last
      .sort((a, b) => Number(a.template.includes('credentials')) - Number(b.template.includes('credentials')));
    const undocumented: string[] = [];
    let sent = 0;
    for (const op of ops) {
      for (const probe of probesFor(op)) {
        const res = await fetch(`${p.platform.url}${probe.path}`, {
          method: op.method,
          headers: probe.headers,
          redirect: 'manual',
          ...(probe.body !== undefined ? { body: probe.body } : {}),
        });
        // the live event stream never ends: its status is the answer
        await res.body?.cancel();
        sent += 1;
        if (!op.statuses.includes(res.status))
          undocumented.push(
            `${op.method} ${op.template} (${op.operationId}) ${probe.what}: ${res.status} answered, documented ${op.statuses.join(', ')}`,
          );
      }
    }
    expect(sent).to.be.greaterThan(400);
    expect(undocumented, undocumented.join('\n')).to.deep.equal([]);
  });
});
