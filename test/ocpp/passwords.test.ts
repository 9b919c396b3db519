import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import type { ChargePointView } from '../../src/csms/views.js';
import { hashSecret } from '../../src/secret-hash.js';
import { eventually } from '../support/eventually.js';
import { clusterEnvironment, embeddedEnvironment, type TestEnvironment } from '../support/platforms.js';
import { strictCharger } from '../support/rpc-client.js';
import { tryConnect } from './support/charger.js';
import { API_KEY, startCsms, uniqueChargePointId, type CsmsUnderTest } from './support/csms.js';
import { v16, v201 } from './support/messages.js';

/**
 * Charger passwords (docs/CSMS.md "Passwords"): generated ones follow the OCPP rule, an operator
 * sets or rotates them through PUT /v1/charge-points/{id}/password, a connected charger is sent
 * the new one first (ocpp-rpc in strict mode as the charger, checking our calls against its own
 * schemas) and the stored one changes with its answer. On SQLite and on PostgreSQL.
 */

interface PasswordAnswer {
  result: string;
  command_id: string | null;
  command_status: string;
  answered: boolean;
  detail: string | null;
  password_state: 'active' | 'pending' | 'discarded';
  password?: string;
}

interface ErrorAnswer {
  error: { code: string; message: string };
}

const fromHex = (hex: string): string => Buffer.from(hex, 'hex').toString('utf8');

function passwordSuite(name: string, environment: () => Promise<TestEnvironment>): void {
  describe(`charger passwords: set and rotate through /v1 (${name})`, function () {
    this.timeout(30_000);
    let csms: CsmsUnderTest;
    let env: TestEnvironment;
    before(async () => {
      env = await environment();
      csms = await startCsms({}, env);
    });
    after(async () => {
      await csms.stop();
      await env.cleanup();
    });

    const put = (id: string, body?: unknown, query = '') =>
      csms.api<PasswordAnswer & ErrorAnswer>('PUT', `/v1/charge-points/${id}/password${query}`, body);
    const view = async (id: string) => (await csms.api<ChargePointView>('GET', `/v1/charge-points/${id}`)).body;
    const login = async (id: string, password: string, protocol: 'ocpp1.6' | 'ocpp2.0.1'): Promise<number> => {
      const r = await tryConnect({
        url: `${csms.url.replace(/^http/, 'ws')}/ocpp/${id}`,
        username: id,
        password,
        protocols: [protocol],
      });
      if (!r.ok) return r.status;
      await r.charger.close();
      return 101;
    };
    /** Whether any row of any table holds `text` (a password must be stored as a hash only). */
    async function databaseHolds(text: string): Promise<boolean> {
      const db = csms.started.platform.services.db;
      const tables =
        db.dialect === 'sqlite'
          ? await db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
          : await db.execute(
              'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()',
            );
      for (const t of tables) {
        const rows = await db.execute(`SELECT * FROM "${String(t.name)}"`);
        if (JSON.stringify(rows).includes(text)) return true;
      }
      return false;
    }

    async function connected(
      cp: { id: string; password: string },
      protocol: 'ocpp1.6' | 'ocpp2.0.1',
      answers: Record<string, (params: unknown) => Promise<Record<string, unknown>>> = {},
      boot = true,
    ): Promise<RPCClient> {
      const client = strictCharger(csms.url, cp, protocol);
      for (const [action, answer] of Object.entries(answers)) client.handle(action, ({ params }) => answer(params));
      await client.connect();
      if (boot) await client.call('BootNotification', protocol === 'ocpp1.6' ? v16.boot() : v201.boot());
      await eventually(async () => ((await view(cp.id)).online ? true : undefined), { what: 'online' });
      return client;
    }

    it('registration gives a password of the OCPP rule: 20 characters of A-Z a-z 0-9', async () => {
      for (const protocol of ['ocpp1.6', 'ocpp2.0.1'] as const) {
        const cp = await csms.registerChargePoint(protocol);
        expect(cp.password).to.match(/^[A-Za-z0-9]{20}$/);
        expect(await login(cp.id, cp.password, protocol)).to.equal(101);
        expect((await view(cp.id)).password).to.deep.equal({ changed_at: null, pending_since: null });
      }
    });

    it('OCPP 1.6: a rotation sends ChangeConfiguration AuthorizationKey (hex); accepted, the charger reconnects with the new password and the old one gets 401', async () => {
      const cp = await csms.registerChargePoint('ocpp1.6');
      const received: unknown[] = [];
      const client = await connected(cp, 'ocpp1.6', {
        ChangeConfiguration: (params) => {
          received.push(params);
          return Promise.resolve({ status: 'Accepted' });
        },
      });
      const res = await put(cp.id, {});
      expect(res.status).to.equal(200);
      const fresh = res.body.password ?? '';
      expect(fresh)
        .to.match(/^[A-Za-z0-9]{20}$/)
        .and.not.equal(cp.password);
      expect(res.body).to.include({
        result: 'ACCEPTED',
        command_status: 'Accepted',
        answered: true,
        password_state: 'active',
      });
      expect(res.body.command_id).to.be.a('string');
      expect(received).to.deep.equal([
        { key: 'AuthorizationKey', value: Buffer.from(fresh).toString('hex').toUpperCase() },
      ]);
      const value = (received[0] as { value: string }).value;
      expect(fromHex(value)).to.equal(fresh);

      await client.close();
      const again = await connected({ id: cp.id, password: fromHex(value) }, 'ocpp1.6', {}, false);
      expect(await login(cp.id, cp.password, 'ocpp1.6')).to.equal(401);
      const v = await view(cp.id);
      expect(v.password.changed_at).to.be.a('string');
      expect(v.password.pending_since).to.equal(null);
      expect(v.commands.map((c) => [c.kind, c.status, c.detail])).to.deep.include(['set-password', 'Accepted', null]);
      expect(JSON.stringify(v)).not.to.contain(fresh);
      expect(await databaseHolds(fresh)).to.equal(false);
      await again.close();
    });

    it('OCPP 2.0.1: SetVariables SecurityCtrlr.BasicAuthPassword, rejected: the old password still works, the new one does not; never stored in clear, even while pending', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const received: unknown[] = [];
      let release = (): void => undefined;
      const answered = new Promise<void>((resolve) => (release = resolve));
      const client = await connected(cp, 'ocpp2.0.1', {
        SetVariables: async (params) => {
          received.push(params);
          await answered;
          return {
            setVariableResult: [
              {
                attributeStatus: 'Rejected',
                component: { name: 'SecurityCtrlr' },
                variable: { name: 'BasicAuthPassword' },
              },
            ],
          };
        },
      });
      const chosen = 'Operator-set.pw:2026|x@y+z*=_';
      const res = await put(cp.id, { password: chosen }, '?wait_ms=0');
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ answered: false, password_state: 'pending' });
      expect(res.body).not.to.have.property('password');
      await eventually(async () => (received.length > 0 ? true : undefined), { what: 'SetVariables sent' });
      expect(received).to.deep.equal([
        {
          setVariableData: [
            {
              component: { name: 'SecurityCtrlr' },
              variable: { name: 'BasicAuthPassword' },
              attributeValue: chosen,
            },
          ],
        },
      ]);
      expect((await view(cp.id)).password.pending_since).to.be.a('string');
      expect(await databaseHolds(chosen)).to.equal(false);
      // (the look reaches the tables: the hash is there, in the row and in the queued command)
      expect(await databaseHolds(hashSecret(chosen))).to.equal(true);

      release();
      const v = await eventually(async () => {
        const now = await view(cp.id);
        return now.commands.some((c) => c.kind === 'set-password' && c.status === 'Rejected') ? now : undefined;
      });
      expect(v.password).to.deep.equal({ changed_at: null, pending_since: null });
      await client.close();
      expect(await login(cp.id, chosen, 'ocpp2.0.1')).to.equal(401);
      expect(await login(cp.id, cp.password, 'ocpp2.0.1')).to.equal(101);
    });

    it('OCPP 2.0.1: an Accepted for another variable is no answer to the new password: it counts as Rejected and the old password stays', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const client = await connected(cp, 'ocpp2.0.1', {
        SetVariables: () =>
          Promise.resolve({
            setVariableResult: [
              {
                attributeStatus: 'Accepted',
                component: { name: 'OCPPCommCtrlr' },
                variable: { name: 'HeartbeatInterval' },
              },
            ],
          }),
      });
      const res = await put(cp.id, { password: 'Another-pw.2026|abc' });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ answered: true, command_status: 'Rejected' });
      expect((await view(cp.id)).password.changed_at).to.equal(null);
      await client.close();
      expect(await login(cp.id, 'Another-pw.2026|abc', 'ocpp2.0.1')).to.equal(401);
      expect(await login(cp.id, cp.password, 'ocpp2.0.1')).to.equal(101);
    });

    it('a charger that takes the new password and reconnects before answering is let in with it; from then on only the new one works', async () => {
      const cp = await csms.registerChargePoint('ocpp1.6');
      let value: string | undefined;
      const client = await connected(cp, 'ocpp1.6', {
        ChangeConfiguration: (params) => {
          value = (params as { value: string }).value;
          return new Promise(() => undefined); // it never answers: it reconnects with the new password
        },
      });
      const res = await put(cp.id, {}, '?wait_ms=0');
      expect(res.body.password_state).to.equal('pending');
      const sent = await eventually(async () => value);
      await client.close({ force: true });
      const again = await connected({ id: cp.id, password: fromHex(sent) }, 'ocpp1.6', {}, false);
      expect(fromHex(sent)).to.equal(res.body.password);
      const v = await eventually(async () => {
        const now = await view(cp.id);
        return now.commands.some((c) => c.kind === 'set-password' && c.status === 'failed') ? now : undefined;
      });
      expect(v.password.pending_since).to.equal(null);
      expect(v.password.changed_at).to.be.a('string');
      await again.close();
      expect(await login(cp.id, cp.password, 'ocpp1.6')).to.equal(401);
    });

    it('one change at a time: while a password waits for its outcome, another answers 409 (force still works)', async () => {
      const cp = await csms.registerChargePoint('ocpp1.6');
      let sent = 0;
      const client = await connected(cp, 'ocpp1.6', {
        ChangeConfiguration: () => {
          sent += 1;
          return new Promise(() => undefined); // no answer yet
        },
      });
      expect((await put(cp.id, {}, '?wait_ms=0')).body.password_state).to.equal('pending');
      const second = await put(cp.id, {}, '?wait_ms=0');
      expect(second.status).to.equal(409);
      expect(sent).to.equal(1);
      const forced = await put(cp.id, { force: true });
      expect(forced.body.command_status).to.equal('stored');
      await client.close({ force: true });
    });

    it('a pending password whose answer was lost, the charger back with its old one: the operator drops it and rotates again', async () => {
      const cp = await csms.registerChargePoint('ocpp1.6');
      const del = () => csms.api<ErrorAnswer>('DELETE', `/v1/charge-points/${cp.id}/password/pending`);
      expect((await del()).status).to.equal(409);
      const client = await connected(cp, 'ocpp1.6', {
        ChangeConfiguration: () => new Promise(() => undefined), // the answer never comes
      });
      const first = await put(cp.id, {}, '?wait_ms=0');
      expect(first.body.password_state).to.equal('pending');
      // still waiting for the charger: not to be dropped
      expect((await del()).body.error.code).to.equal('password_change_in_flight');
      // the connection breaks before the answer (the process holding it stopped, as in a failover)
      await client.close({ force: true });
      await eventually(async () =>
        (await view(cp.id)).commands.some((c) => c.kind === 'set-password' && c.status === 'failed') ? true : undefined,
      );
      const again = await connected(cp, 'ocpp1.6', {
        ChangeConfiguration: () => Promise.resolve({ status: 'Accepted' }),
      });
      // the outcome will never be known: a rotation waits for it, for ever
      const blocked = await put(cp.id, {}, '?wait_ms=0');
      expect(blocked.status).to.equal(409);
      expect(blocked.body.error.message).to.contain('password/pending');
      expect((await del()).status).to.equal(204);
      expect((await view(cp.id)).password.pending_since).to.equal(null);
      expect(await login(cp.id, String(first.body.password), 'ocpp1.6')).to.equal(401);
      const rotated = await put(cp.id, {});
      expect(rotated.body).to.include({ command_status: 'Accepted', password_state: 'active' });
      await again.close({ force: true });
    });

    it("a password that breaks the rule of the charger's version answers 422 and sends nothing", async () => {
      const cp16 = await csms.registerChargePoint('ocpp1.6');
      const received: unknown[] = [];
      const client = await connected(cp16, 'ocpp1.6', {
        ChangeConfiguration: (params) => {
          received.push(params);
          return Promise.resolve({ status: 'Accepted' });
        },
      });
      const cases: Array<[unknown, string]> = [
        [{ password: 'a'.repeat(21) }, '16 to 20'], // 1.6: at most 20 octets in AuthorizationKey
        [{ password: 'short-password1' }, '16 to 20'],
        [{ password: 'sixteen-chars-ok!' }, 'passwordString'],
        [{ password: 'with a space 1234' }, 'passwordString'],
        [{ password: 'ünïcödé-pässwörd-1' }, 'passwordString'],
      ];
      for (const [body, words] of cases) {
        const res = await put(cp16.id, body);
        expect(res.status, JSON.stringify(body)).to.equal(422);
        expect(res.body.error.code).to.equal('password_rule');
        expect(res.body.error.message).to.contain(words);
      }
      const both = await put(cp16.id, { password: 'a'.repeat(16), generate: true });
      expect([both.status, both.body.error.code]).to.deep.equal([422, 'password_or_generate']);
      expect(received).to.deep.equal([]);

      const cp201 = await csms.registerChargePoint('ocpp2.0.1');
      const long = await put(cp201.id, { password: 'b'.repeat(41) });
      expect([long.status, long.body.error.message]).to.deep.equal([
        422,
        "an OCPP 2.0.1 charger's password is 16 to 40 characters (BasicAuthPassword); this one has 41",
      ]);
      expect((await put('NOBODY-HERE', {})).status).to.equal(404);
      await client.close();
      expect(await login(cp16.id, cp16.password, 'ocpp1.6')).to.equal(101);
    });

    it('an offline charger: 409 unless force, which stores the password at once and sends nothing', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const offline = await put(cp.id, {});
      expect([offline.status, offline.body.error.code]).to.deep.equal([409, 'charge_point_offline']);
      expect(await login(cp.id, cp.password, 'ocpp2.0.1')).to.equal(101);

      const forced = await put(cp.id, { force: true });
      expect(forced.status).to.equal(200);
      expect(forced.body).to.include({ command_id: null, answered: true, password_state: 'active' });
      const fresh = forced.body.password ?? '';
      expect(fresh).to.match(/^[A-Za-z0-9]{20}$/);
      expect(await login(cp.id, cp.password, 'ocpp2.0.1')).to.equal(401);
      expect(await login(cp.id, fresh, 'ocpp2.0.1')).to.equal(101);

      const chosen = 'a-40-character-password-for-2.0.1-ok..xy';
      expect(chosen).to.have.length(40);
      const set = await put(cp.id, { password: chosen, force: true });
      expect(set.status).to.equal(200);
      expect(set.body).not.to.have.property('password');
      expect(await login(cp.id, fresh, 'ocpp2.0.1')).to.equal(401);
      expect(await login(cp.id, chosen, 'ocpp2.0.1')).to.equal(101);
      expect(await databaseHolds(chosen)).to.equal(false);
    });

    it('a charger registered before the rule (32 base64url characters) keeps logging in, and can be rotated', async () => {
      const id = uniqueChargePointId('OLD');
      const old = 'Zm9vYmFyLWJhei1xdXV4LTAxMjM0NTY3'; // 32 base64url characters, as issued before
      await csms.started.platform.services.db.execute(
        'INSERT INTO csms_charge_point (id, protocol, key_hash, created_at) VALUES (?, ?, ?, ?)',
        [id, 'ocpp2.0.1', hashSecret(old), Date.now()],
      );
      const client = await connected({ id, password: old }, 'ocpp2.0.1', {
        SetVariables: () =>
          Promise.resolve({
            setVariableResult: [
              {
                attributeStatus: 'Accepted',
                component: { name: 'SecurityCtrlr' },
                variable: { name: 'BasicAuthPassword' },
              },
            ],
          }),
      });
      const res = await put(id);
      expect(res.body).to.include({ command_status: 'Accepted', password_state: 'active' });
      await client.close();
      expect(await login(id, old, 'ocpp2.0.1')).to.equal(401);
      expect(await login(id, res.body.password ?? '', 'ocpp2.0.1')).to.equal(101);
    });
  });
}

// a few chargers of this file fail to log in on purpose: keep the address back-off out of the way
const settings = { CSMS_API_KEY: API_KEY, OCPP_LOGIN_FAILURES: '100' };
passwordSuite('SQLite', () => embeddedEnvironment(settings));
passwordSuite('PostgreSQL', () => clusterEnvironment(settings));
