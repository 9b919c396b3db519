import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import { strictCharger } from './rpc-client.js';
import { platformModules } from '../../src/modules.js';
import { aLocation, anEvse, aToken, aToken221 } from './ocpi-builders.js';
import { API_KEY, OcpiApi, type Answer } from './ocpi-harness.js';
import { startSimulator, type OcpiSimulator, type OcpiVersion, type SimulatorOptions } from './ocpi-simulator.js';
import { PG_URL, tempSchema } from './databases.js';
import { embeddedEnvironment, startPlatform, type StartedPlatform, type TestEnvironment } from './platforms.js';

/**
 * The world of the roaming tests (docs/ROAMING.md): the platform as its README starts it, eMSP
 * partners that discovered us from the versions URL they were handed (OCPI simulators on port
 * 0), and chargers that are independent OCPP clients (ocpp-rpc).
 */

type Json = Record<string, unknown>;

export interface Emsp {
  sim: OcpiSimulator;
  /** the operator's id of the partner */
  id: string;
  version: OcpiVersion;
}

/**
 * One process on PostgreSQL (a fresh schema) instead of SQLite: `ROAMING_TEST_DB=postgresql npm
 * test -- roaming` runs the roaming suite on the production database.
 */
async function postgresEnvironment(extra: Record<string, string>): Promise<TestEnvironment> {
  const schema = await tempSchema();
  const base = await embeddedEnvironment(extra);
  return {
    ...base,
    env: { ...base.env, DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema.schema },
    cleanup: async () => {
      await base.cleanup();
      await schema.drop();
    },
  };
}

function apiOf(platform: StartedPlatform): OcpiApi {
  return new OcpiApi({
    mode: 'embedded',
    urls: [platform.platform.url],
    partner: () => Promise.reject(new Error('the roaming world uses simulators')),
    stop: async () => undefined,
  });
}

export class RoamingWorld {
  private readonly sims: OcpiSimulator[] = [];
  private readonly chargers: RPCClient[] = [];
  private counter = 0;

  private constructor(
    readonly env: TestEnvironment,
    private started: StartedPlatform,
    private client: OcpiApi,
  ) {}

  get platform(): StartedPlatform {
    return this.started;
  }

  get api(): OcpiApi {
    return this.client;
  }

  /** Stops the platform (its chargers' sockets close) and starts it again on the same database. */
  async restart(): Promise<void> {
    await this.started.stop();
    this.started = await startPlatform(this.env, platformModules());
    this.client = apiOf(this.started);
  }

  /** The world on SQLite, or on PostgreSQL when ROAMING_TEST_DB or `opts.database` says so. */
  static async start(
    settings: Record<string, string> = {},
    opts: { database?: 'postgresql'; callTimeoutMs?: number } = {},
  ): Promise<RoamingWorld> {
    const pg = opts.database === 'postgresql' || process.env.ROAMING_TEST_DB === 'postgresql';
    const env = await (pg ? postgresEnvironment : embeddedEnvironment)({
      CSMS_API_KEY: API_KEY,
      PARTNER_URL_POLICY: 'loopback',
      PARTNER_TIMEOUT_MS: '1000',
      OUTBOX_RETRY_BASE_MS: '50',
      OUTBOX_RETRY_MAX_MS: '400',
      OUTBOX_SWEEP_MS: '50',
      OUTBOX_BREAKER_COOLDOWN_MS: '200',
      ...settings,
    });
    const csms = opts.callTimeoutMs === undefined ? {} : { callTimeoutMs: opts.callTimeoutMs };
    const platform = await startPlatform(env, platformModules(csms));
    return new RoamingWorld(env, platform, apiOf(platform));
  }

  async stop(): Promise<void> {
    await Promise.all(this.chargers.splice(0).map((c) => c.close({ force: true }).catch(() => undefined)));
    await this.platform.stop();
    await Promise.all(this.sims.splice(0).map((s) => s.close()));
    await this.env.cleanup();
  }

  unique(prefix: string): string {
    return `${prefix}${++this.counter}-${Date.now().toString(36)}`.toUpperCase();
  }

  /** An eMSP onboarded by the operator that registers with us from the versions URL it was handed. */
  emsp(version: OcpiVersion): Promise<Emsp> {
    return this.partner(version, 'EMSP');
  }

  /**
   * A partner of `role` onboarded by the operator that registers with us from the versions URL it
   * was handed; `options` of its simulator besides versions and parties.
   */
  async partner(
    version: OcpiVersion,
    role: 'CPO' | 'EMSP',
    options: Omit<SimulatorOptions, 'versions' | 'parties'> = {},
  ): Promise<Emsp> {
    const party = {
      role,
      country_code: 'DE',
      party_id: this.unique('')
        .replace(/[^A-Z0-9]/g, '')
        .slice(-3),
    };
    const sim = await startSimulator({ versions: [version], parties: [party], ...options });
    this.sims.push(sim);
    const created = await this.api.request('POST', '/v1/partners', { body: party });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const body = created.body as { id: string; versions_url: string; token: string };
    const result = await sim.registerWith(body.versions_url, body.token);
    expect(result.answer.statusCode, JSON.stringify(result.answer.body)).to.equal(1000);
    return { sim, id: body.id, version };
  }

  /**
   * The eMSP pushes one of its tokens to our tokens Receiver (valid, whitelist ALLOWED unless
   * `over` says otherwise); answers the token as sent.
   */
  async pushToken(e: Emsp, uid: string, over: Json = {}): Promise<Json> {
    const { country_code, party_id } = e.sim.party;
    const token =
      e.version === '2.2.1'
        ? aToken221({ uid, country_code, party_id, ...over })
        : aToken({ uid, auth_id: `${country_code}-${party_id}-${uid}`, ...over });
    const answer = await e.sim.call('PUT', 'tokens', `/${country_code}/${party_id}/${uid}`, token, {
      ...(e.version === '2.2.1' ? { role: 'RECEIVER' as const } : {}),
    });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.statusCode).to.equal(1000);
    return token;
  }

  /** One of our locations with the EVSEs `uids` (status AVAILABLE), as the operator PUTs it. */
  async location(id: string, uids: string[]): Promise<void> {
    const body = aLocation({ id, evses: uids.map((uid) => anEvse({ uid, status: 'AVAILABLE' })) });
    const res = await this.api.request('PUT', `/v1/ocpi/locations/${id}`, { body });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  }

  /** A charge point registered by the operator: its id and password. */
  async chargePoint(protocol: 'ocpp1.6' | 'ocpp2.0.1'): Promise<{ id: string; password: string }> {
    const id = this.unique('CP-');
    const res = await this.api.request('POST', '/v1/charge-points', { body: { id, protocol } });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return { id, password: String((res.body as Json).password) };
  }

  async link(cp: string, evse: number, locationId: string, evseUid: string): Promise<Answer> {
    const res = await this.api.request('PUT', `/v1/charge-points/${cp}/evses/${evse}`, {
      body: { location_id: locationId, evse_uid: evseUid },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res;
  }

  /**
   * A location of ours with EVSE `E1`, a charge point whose EVSE 1 is linked to it, and the
   * charger connected and booted.
   */
  async linkedCharger(
    protocol: 'ocpp1.6' | 'ocpp2.0.1',
  ): Promise<{ loc: string; cp: { id: string; password: string }; charger: RPCClient }> {
    const loc = this.unique('LOC-');
    await this.location(loc, ['E1']);
    const cp = await this.chargePoint(protocol);
    await this.link(cp.id, 1, loc, 'E1');
    return { loc, cp, charger: await this.charger(cp, protocol) };
  }

  /** The charger, connected and booted. */
  async charger(cp: { id: string; password: string }, protocol: 'ocpp1.6' | 'ocpp2.0.1'): Promise<RPCClient> {
    const client = strictCharger(this.platform.platform.url, cp, protocol);
    this.chargers.push(client);
    await client.connect();
    const boot =
      protocol === 'ocpp1.6'
        ? { chargePointVendor: 'Roam', chargePointModel: 'R1' }
        : { reason: 'PowerUp', chargingStation: { vendorName: 'Roam', model: 'R1' } };
    expect(await client.call('BootNotification', boot)).to.include({ status: 'Accepted' });
    return client;
  }
}

/** A 1.6 StatusNotification of `connectorId`. */
export function status16(connectorId: number, status: string): Json {
  return {
    connectorId,
    status,
    errorCode: status === 'Faulted' ? 'GroundFailure' : 'NoError',
    timestamp: new Date().toISOString(),
  };
}

/** A 2.0.1 StatusNotification of one connector of an EVSE. */
export function status201(evseId: number, connectorId: number, connectorStatus: string): Json {
  return { evseId, connectorId, connectorStatus, timestamp: new Date().toISOString() };
}
