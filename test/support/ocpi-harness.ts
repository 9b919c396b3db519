import { randomBytes } from 'node:crypto';
import { ocpiModule } from '../../src/ocpi/module.js';
import { clusterEnvironment, embeddedEnvironment, startPlatform, type StartedPlatform } from './platforms.js';
import { startNode, type NodeProcess } from './processes.js';
import { credentials211, credentials221, type Json, type PartyOf } from './ocpi-builders.js';
import { loopbackPartner, type FakePartner, type FakePartnerOptions } from './ocpi-partners.js';

export const API_KEY = 'test-operator-key-0123456789';

/**
 * Where the OCPI suites run: one embedded platform, or two `web` processes of a cluster
 * (Redis, PostgreSQL). Requests alternate between the processes, so every multi-step flow
 * crosses processes in cluster mode.
 */
export interface OcpiTarget {
  mode: 'embedded' | 'cluster';
  urls: string[];
  partner(token: string, versions?: string[], options?: FakePartnerOptions): Promise<FakePartner>;
  stop(): Promise<void>;
  /** the embedded platform (embedded mode only) */
  platform?: StartedPlatform;
  /** the Redis key prefix (cluster mode only) */
  redisPrefix?: string;
}

/**
 * The fake partners of the suites are servers on loopback, which the default destination policy
 * refuses: the targets allow loopback explicitly.
 */
const PARTNERS_ON_LOOPBACK = { PARTNER_URL_POLICY: 'loopback' };

/** The fake partners a target started, closed when it stops. */
function partnerPool(): { partner: OcpiTarget['partner']; closeAll(): Promise<void> } {
  const partners: FakePartner[] = [];
  return {
    partner: async (token, versions, options) => {
      const partner = await loopbackPartner(token, versions, options);
      partners.push(partner);
      return partner;
    },
    closeAll: async () => {
      await Promise.all(partners.splice(0).map((p) => p.close()));
    },
  };
}

export async function embeddedTarget(extra: Record<string, string> = {}): Promise<OcpiTarget> {
  const env = await embeddedEnvironment({ CSMS_API_KEY: API_KEY, ...PARTNERS_ON_LOOPBACK, ...extra });
  const started = await startPlatform(env, [ocpiModule()]);
  const partners = partnerPool();
  return {
    mode: 'embedded',
    urls: [started.platform.url],
    platform: started,
    partner: partners.partner,
    stop: async () => {
      await started.stop();
      await partners.closeAll();
      await env.cleanup();
    },
  };
}

export async function clusterTarget(): Promise<OcpiTarget> {
  // env.env goes to the child processes: they get the policy too
  const env = await clusterEnvironment({ CSMS_API_KEY: API_KEY, ...PARTNERS_ON_LOOPBACK });
  const nodes: NodeProcess[] = [];
  try {
    for (let i = 0; i < 2; i++) nodes.push(await startNode({ ...env.env, PROCESS_ROLE: 'web', LOG_LEVEL: 'warn' }));
  } catch (err) {
    await Promise.all(nodes.map((n) => n.stop()));
    await env.cleanup();
    throw err;
  }
  const partners = partnerPool();
  return {
    mode: 'cluster',
    urls: nodes.map((n) => n.url),
    redisPrefix: env.env.REDIS_PREFIX,
    partner: partners.partner,
    stop: async () => {
      await Promise.all(nodes.map((n) => n.stop()));
      await partners.closeAll();
      await env.cleanup();
    },
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  body: Json;
}

export interface RequestOptions {
  token?: string;
  /** how the token is put in the header; default raw */
  encoding?: 'raw' | 'base64';
  body?: unknown;
  /** a body sent as it is (malformed JSON) */
  rawBody?: string;
  /** Bearer key for /v1; default the test key, false for none */
  bearer?: string | false;
  /** pin the request to one process (index into urls) */
  on?: number;
  /** more request headers (the 2.2.1 routing headers) */
  headers?: Record<string, string>;
}

let partySeq = 0;
/** A party id no other test uses (3 uppercase alphanumerics). */
export function uniqueParty(countryCode = 'DE'): PartyOf {
  partySeq += 1;
  const pid = `${String.fromCharCode(65 + (partySeq % 26))}${randomBytes(1).toString('hex').toUpperCase()}`.slice(0, 3);
  return { country_code: countryCode, party_id: pid.padEnd(3, 'X') };
}

export function base64(token: string): string {
  return Buffer.from(token).toString('base64');
}

export interface RegisteredPartner {
  id: string;
  party: PartyOf;
  tokenA: string;
  /** the token we issued in the handshake: the partner's key to our endpoints */
  token: string;
  fake: FakePartner;
}

/** HTTP access to an OcpiTarget, with the onboarding and handshake steps tests share. */
export class OcpiApi {
  private turn = 0;
  constructor(readonly target: OcpiTarget) {}

  url(on?: number): string {
    const urls = this.target.urls;
    const i = on ?? this.turn++ % urls.length;
    const u = urls[i % urls.length];
    if (!u) throw new Error('no url');
    return u;
  }

  async request(method: string, path: string, opts: RequestOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token !== undefined)
      headers.Authorization = `Token ${opts.encoding === 'base64' ? base64(opts.token) : opts.token}`;
    if (path.startsWith('/v1') && opts.bearer !== false) headers.Authorization = `Bearer ${opts.bearer ?? API_KEY}`;
    let body: string | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(`${this.url(opts.on)}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      redirect: 'manual',
    });
    const text = await res.text();
    let parsed: Json = {};
    if (text) {
      const value: unknown = JSON.parse(text);
      parsed = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : { value };
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  async onboard(party: PartyOf, role: 'CPO' | 'EMSP'): Promise<{ id: string; token: string; versions_url: string }> {
    const res = await this.request('POST', '/v1/partners', { body: { ...party, role } });
    if (res.status !== 201) throw new Error(`onboarding failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: string; token: string; versions_url: string };
  }

  /** Onboards a partner and completes its handshake via POST `credentialsPath` (2.2.1 body). */
  async register(
    role: 'CPO' | 'EMSP',
    credentialsPath = role === 'CPO' ? '/ocpi/emsp/2.2.1/credentials' : '/ocpi/2.2.1/credentials',
    fakeOptions?: { versions?: string[] } & FakePartnerOptions,
  ): Promise<RegisteredPartner> {
    const party = uniqueParty();
    const { id, token: tokenA } = await this.onboard(party, role);
    const fake = await this.target.partner(`B-${randomBytes(8).toString('hex')}`, fakeOptions?.versions, fakeOptions);
    const res = await this.request('POST', credentialsPath, {
      token: tokenA,
      // 2.1.1 sends tokens as they are; 2.2.1 in base64
      encoding: credentialsPath.includes('/2.1.1/') ? 'raw' : 'base64',
      body: credentialsPath.includes('/2.1.1/')
        ? credentials211(party, fake.token, fake.versionsUrl)
        : credentials221(party, fake.token, fake.versionsUrl, role),
    });
    const data = res.body.data as { token?: string } | undefined;
    if (res.status !== 200 || res.body.status_code !== 1000 || !data?.token)
      throw new Error(`handshake failed: ${res.status} ${JSON.stringify(res.body)}`);
    return { id, party, tokenA, token: data.token, fake };
  }
}

export function dataOf<T = Json>(a: Answer): T {
  return a.body.data as T;
}

/**
 * The mocha hooks of a suite that runs against one target: started before its tests, stopped
 * after them. The target and its API are read through the returned object once `before` ran.
 */
export function useOcpiTarget(makeTarget: () => Promise<OcpiTarget>): {
  readonly target: OcpiTarget;
  readonly api: OcpiApi;
} {
  let target: OcpiTarget | undefined;
  let api: OcpiApi | undefined;
  before(async () => {
    target = await makeTarget();
    api = new OcpiApi(target);
  });
  after(async () => {
    await target?.stop();
  });
  return {
    get target(): OcpiTarget {
      if (!target) throw new Error('the target starts in before()');
      return target;
    },
    get api(): OcpiApi {
      if (!api) throw new Error('the target starts in before()');
      return api;
    },
  };
}
