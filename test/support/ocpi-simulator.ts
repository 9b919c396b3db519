import { randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OCPI roaming partner written from the specification text alone (OCPI 2.1.1: credentials.md,
 * version_information_endpoint.md, transport_and_format.md; OCPI 2.2.1: chapters 4 "Transport and
 * format", 5 "Status codes", 6 "Versions module", 7 "Credentials module"), never from the
 * platform's code: it answers and asks as the spec says, so a platform that strays shows up as a
 * refused request or as an entry in `violations`.
 *
 * One simulator speaks to one peer (the platform under test): it keeps one credentials link.
 */

export type OcpiVersion = '2.1.1' | '2.2.1';
export type PartyRole = 'CPO' | 'EMSP';
export type InterfaceRole = 'SENDER' | 'RECEIVER';

export interface SimulatedParty {
  role: PartyRole;
  country_code: string;
  party_id: string;
}

export interface SimulatedModule {
  identifier: string;
  /** 2.2.1 only (6.2.2): 2.1.1 endpoints carry no role */
  role: InterfaceRole;
}

export interface SimulatorOptions {
  /** the versions it supports */
  versions: OcpiVersion[];
  /** its roles; 2.1.1 credentials carry exactly one party, 2.2.1 one or more (7.3.1) */
  parties: SimulatedParty[];
  /** the modules it lists besides credentials; default: the usual interfaces of its roles */
  modules?: SimulatedModule[];
  /** modules it expects at the peer: missing ones end a registration with 3003 (7.1.6) */
  requiredModules?: string[];
  /** what its commands Receiver answers a POST of `command` (a CPO's CommandResponse); default no data */
  commandResponse?: (command: string, body: unknown) => unknown;
}

export interface Endpoint {
  identifier: string;
  role?: string;
  url: string;
}

export interface CredentialsRole {
  role: string;
  party_id: string;
  country_code: string;
  business_details: { name: string };
}

/** Either shape of the credentials object: 2.1.1 (one party) or 2.2.1 (roles). */
export interface Credentials {
  token: string;
  url: string;
  business_details?: { name: string };
  party_id?: string;
  country_code?: string;
  roles?: CredentialsRole[];
}

export interface RecordedRequest {
  seq: number;
  method: string;
  /** the path with its query */
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** the credentials token the Authorization header carried, when it named one the simulator knows */
  token?: string;
  /** how the header carried it */
  tokenForm: 'raw' | 'base64' | 'missing' | 'unknown';
  /** the HTTP status the simulator answered */
  status?: number;
  /** when it arrived and when its answer went (epoch ms) */
  receivedAt: number;
  answeredAt?: number;
}

export interface OcpiAnswer {
  status: number;
  headers: Headers;
  /** the parsed JSON body (undefined when empty or not JSON) */
  body: unknown;
  statusCode?: number;
  data?: unknown;
}

export interface HandshakeResult {
  answer: OcpiAnswer;
  version: OcpiVersion;
  /** the token the simulator handed over (the peer uses it to call the simulator) */
  tokenGiven: string;
  /** the token the peer answered (the simulator uses it to call the peer), on success */
  tokenReceived?: string;
}

/** The simulator's view of its link with the peer. */
export interface PeerLink {
  registered: boolean;
  version: OcpiVersion;
  /** the token the peer presents to the simulator */
  tokenToUs: string;
  /** the token the simulator presents to the peer */
  tokenToThem: string;
  /** the peer's credentials as last received */
  credentials: Credentials;
  /** the peer's endpoints for `version` */
  endpoints: Endpoint[];
}

export interface CallOptions {
  /** the token to present; default the link's */
  token?: string;
  /** which of the peer's endpoints, when it lists the identifier for both interfaces (2.2.1) */
  role?: InterfaceRole;
  /** the simulator's party sending the request (2.2.1 routing headers); default the first */
  from?: SimulatedParty;
}

const CONTENT_JSON = 'application/json';
const KNOWN_ROLES = ['CPO', 'EMSP', 'HUB', 'NAP', 'NSP', 'OTHER', 'SCSP'];

/** The usual interfaces of a role (2.2.1 module chapters, "Interfaces and endpoints"). */
function defaultModules(parties: SimulatedParty[]): SimulatedModule[] {
  const byRole: Record<PartyRole, SimulatedModule[]> = {
    CPO: [
      { identifier: 'locations', role: 'SENDER' },
      { identifier: 'sessions', role: 'SENDER' },
      { identifier: 'cdrs', role: 'SENDER' },
      { identifier: 'tariffs', role: 'SENDER' },
      { identifier: 'tokens', role: 'RECEIVER' },
      { identifier: 'commands', role: 'RECEIVER' },
    ],
    EMSP: [
      { identifier: 'locations', role: 'RECEIVER' },
      { identifier: 'sessions', role: 'RECEIVER' },
      { identifier: 'cdrs', role: 'RECEIVER' },
      { identifier: 'tariffs', role: 'RECEIVER' },
      { identifier: 'tokens', role: 'SENDER' },
      { identifier: 'commands', role: 'SENDER' },
    ],
  };
  const seen = new Set<string>();
  return parties
    .flatMap((p) => byRole[p.role])
    .filter((m) => {
      const key = `${m.identifier}/${m.role}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

function base64(token: string): string {
  return Buffer.from(token, 'utf8').toString('base64');
}

/**
 * 2.1.1 "Request format": `Token <token>`; 2.2.1 4.1.2: `Token <base64 of the UTF-8 token>`.
 */
export function authorizationFor(token: string, version: OcpiVersion): string {
  return `Token ${version === '2.2.1' ? base64(token) : token}`;
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isVersion(value: unknown): value is OcpiVersion {
  return value === '2.1.1' || value === '2.2.1';
}

/** 2.2.1 7.3.1: printable non-whitespace ASCII (U+0021..U+007E), at most 64 characters. */
function tokenProblem(token: unknown): string | undefined {
  if (typeof token !== 'string' || token.length === 0) return 'token missing';
  if (token.length > 64) return 'token longer than 64 characters';
  if (!/^[\x21-\x7e]+$/.test(token)) return 'token not printable non-whitespace ASCII';
  return undefined;
}

function partyProblems(where: string, value: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (typeof value.party_id !== 'string' || value.party_id.length === 0 || value.party_id.length > 3)
    problems.push(`${where}party_id must be a string of at most 3 characters`);
  if (typeof value.country_code !== 'string' || value.country_code.length !== 2)
    problems.push(`${where}country_code must be a 2-letter code`);
  if (!isRecord(value.business_details) || typeof value.business_details.name !== 'string')
    problems.push(`${where}business_details.name missing`);
  return problems;
}

/** What is wrong with a credentials object of `version` (2.1.1 credentials.md 2.1; 2.2.1 7.3.1, 7.4.1). */
export function credentialsProblems(value: unknown, version: OcpiVersion): string[] {
  if (!isRecord(value)) return ['credentials must be an object'];
  const problems: string[] = [];
  const bad = tokenProblem(value.token);
  if (bad) problems.push(bad);
  if (typeof value.url !== 'string' || !URL.canParse(value.url)) problems.push('url must be a URL');
  if (version === '2.1.1') return [...problems, ...partyProblems('', value)];
  if (!Array.isArray(value.roles) || value.roles.length === 0)
    return [...problems, 'roles must list at least one role'];
  const combos = new Set<string>();
  value.roles.forEach((role: unknown, i) => {
    if (!isRecord(role)) return void problems.push(`roles[${i}] must be an object`);
    if (typeof role.role !== 'string' || !KNOWN_ROLES.includes(role.role))
      problems.push(`roles[${i}].role must be one of ${KNOWN_ROLES.join(', ')}`);
    problems.push(...partyProblems(`roles[${i}].`, role));
    const combo = `${String(role.role)}/${String(role.country_code)}/${String(role.party_id)}`;
    if (combos.has(combo)) problems.push(`roles[${i}] repeats ${combo} (every role needs a unique combination)`);
    combos.add(combo);
  });
  return problems;
}

async function readBody(req: IncomingMessage): Promise<{ text: string; json: unknown; malformed: boolean }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return { text, json: undefined, malformed: false };
  try {
    return { text, json: JSON.parse(text) as unknown, malformed: false };
  } catch {
    return { text, json: undefined, malformed: true };
  }
}

function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Raised when the simulator cannot go on with a step (the peer answered something unusable). */
export class SimulatorError extends Error {
  override readonly name = 'SimulatorError';
}

/** What a token presented to the simulator is. */
type TokenKind = 'tokenA' | 'link' | 'handover';

interface Reply {
  status: number;
  statusCode?: number;
  message?: string;
  data?: unknown;
  headers?: Record<string, string>;
  /** a body sent as it is instead of an OCPI envelope (a proxy's page, an empty or cut body) */
  raw?: string;
}

export class OcpiSimulator {
  readonly received: RecordedRequest[] = [];
  readonly violations: string[] = [];
  private seq = 0;
  private readonly tokensA = new Set<string>();
  /** tokens of ours sent in a POST or PUT still under way: the peer fetches our endpoints with them */
  private readonly handover = new Set<string>();
  private current: PeerLink | undefined;
  private readonly modules: SimulatedModule[];
  /** answers forced on the next requests to its modules (an outage, a refusal) */
  private readonly faults: Array<{ status: number; statusCode: number }> = [];
  /** the same, for requests whose path contains `contains` (`failPath`) */
  private readonly pathFaults: Array<{ contains: string; status: number; statusCode: number }> = [];
  /** what its Sender modules list (`listOnSender`) */
  private readonly served = new Map<string, unknown[]>();
  /** bodies forced on the next requests to its modules, without an envelope (`answerRawNext`) */
  private readonly rawAnswers: Array<{ status: number; raw: string }> = [];
  private down = false;
  private readonly slowPaths: { contains: string; ms: number }[] = [];
  /** what its tokens Sender answers to a real-time authorization, by token uid (default ALLOWED) */
  private readonly authorizations = new Map<string, string>();
  private readonly authorizedAt = new Map<string, { location_id: string; evse_uids?: string[] }>();

  private readonly server: Server;
  private origin = '';

  private constructor(readonly options: SimulatorOptions) {
    if (options.versions.length === 0) throw new Error('a simulator supports at least one version');
    if (options.parties.length === 0) throw new Error('a simulator has at least one party');
    if (options.versions.includes('2.1.1') && options.parties.length > 1)
      throw new Error('2.1.1 credentials carry one party: several parties need versions ["2.2.1"]');
    this.modules = options.modules ?? defaultModules(options.parties);
    this.server = createServer((req, res) => void this.serve(req, res));
    // the peer may abort a request it gave up on: a reset is not an error here
    this.server.on('connection', (socket) => socket.on('error', () => undefined));
  }

  static async start(options: SimulatorOptions): Promise<OcpiSimulator> {
    const sim = new OcpiSimulator(options);
    await new Promise<void>((resolve) => sim.server.listen(0, '127.0.0.1', () => resolve()));
    sim.origin = `http://127.0.0.1:${(sim.server.address() as AddressInfo).port}`;
    return sim;
  }

  /** http://127.0.0.1:<port> */
  get base(): string {
    return this.origin;
  }

  get versionsUrl(): string {
    return `${this.base}/ocpi/versions`;
  }

  /** The link with the peer, kept (with `registered: false`) after unregistering. */
  get link(): PeerLink | undefined {
    return this.current ? { ...this.current } : undefined;
  }

  get party(): SimulatedParty {
    const first = this.options.parties[0];
    if (!first) throw new Error('no party');
    return first;
  }

  /** A new CREDENTIALS_TOKEN_A, handed to the peer "offline" (7.1.1). */
  issueTokenA(): string {
    const token = `A-${randomUUID()}`;
    this.tokensA.add(token);
    return token;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /**
   * The next `count` requests to its modules (not versions or credentials) are answered with
   * `status` (503 by default: the partner is overloaded) instead of being served.
   */
  failNext(count: number, status = 503, statusCode = status >= 500 ? 3000 : 2000): void {
    for (let i = 0; i < count; i++) this.faults.push({ status, statusCode });
  }

  /**
   * The next `count` requests to its modules are answered `status` with `raw` as the body, not an
   * OCPI envelope (a proxy's error page answered 200, an empty or cut body).
   */
  answerRawNext(count: number, status: number, raw: string): void {
    for (let i = 0; i < count; i++) this.rawAnswers.push({ status, raw });
  }

  /** What a GET of its `module` Sender lists from now on (one page). */
  listOnSender(module: string, objects: unknown[]): void {
    this.served.set(module, objects);
  }

  /** As `failNext`, for the next `count` requests whose path contains `contains` only. */
  failPath(contains: string, count: number, status = 503, statusCode = status >= 500 ? 3000 : 2000): void {
    for (let i = 0; i < count; i++) this.pathFaults.push({ contains, status, statusCode });
  }

  /**
   * Its answer to a real-time authorization of `uid` (OCPI AllowedType: ALLOWED, BLOCKED, ...;
   * UNKNOWN: 2004), with `location` (LocationReferences: where the token may charge) when given.
   */
  setAuthorization(uid: string, allowed: string, location?: { location_id: string; evse_uids?: string[] }): void {
    this.authorizations.set(uid, allowed);
    if (location) this.authorizedAt.set(uid, location);
    else this.authorizedAt.delete(uid);
  }

  /** Requests whose path contains `contains` are answered after `ms` (a partner slow to store them). */
  setSlow(contains: string, ms: number): void {
    this.slowPaths.push({ contains, ms });
  }

  /** Until `setDown(false)`, every request to its modules is answered 503 (a partner that is down). */
  setDown(down: boolean): void {
    this.down = down;
  }

  /** Requests received since `seq` (exclusive). */
  receivedSince(seq: number): RecordedRequest[] {
    return this.received.filter((r) => r.seq > seq);
  }

  get lastSeq(): number {
    return this.seq;
  }

  // ---------------------------------------------------------------------------------------------
  // what it offers

  /** Where a CPO is to POST the result of a command it sends (its commands module, 2.2.1 13.2.2). */
  responseUrl(version: OcpiVersion, command: string, id: string): string {
    const module = this.modules.find((m) => m.identifier === 'commands') ?? { identifier: 'commands', role: 'SENDER' };
    return `${this.moduleUrl(version, module)}/${command}/${id}`;
  }

  private versionUrl(version: OcpiVersion): string {
    return `${this.base}/ocpi/${version}`;
  }

  private moduleUrl(version: OcpiVersion, module: SimulatedModule): string {
    return version === '2.2.1'
      ? `${this.versionUrl(version)}/${module.role.toLowerCase()}/${module.identifier}`
      : `${this.versionUrl(version)}/${module.identifier}`;
  }

  private details(version: OcpiVersion): { version: OcpiVersion; endpoints: Endpoint[] } {
    // 6.2.2 NOTE: SENDER is the advised role for one's own credentials endpoint
    const credentials: Endpoint = {
      identifier: 'credentials',
      role: 'SENDER',
      url: `${this.versionUrl(version)}/credentials`,
    };
    const modules = this.modules.map((m) => ({
      identifier: m.identifier,
      role: m.role,
      url: this.moduleUrl(version, m),
    }));
    const all = [credentials, ...modules];
    if (version === '2.2.1') return { version, endpoints: all };
    // 2.1.1 lists an identifier once, without role
    const seen = new Set<string>();
    const once = all.filter((e) => !seen.has(e.identifier) && seen.add(e.identifier));
    return { version, endpoints: once.map(({ identifier, url }) => ({ identifier, url })) };
  }

  /** Our own credentials object for `version`, carrying `token` for the peer. */
  ownCredentials(token: string, version: OcpiVersion): Credentials {
    const name = (p: SimulatedParty): { name: string } => ({
      name: `Simulated ${p.role} ${p.country_code}*${p.party_id}`,
    });
    if (version === '2.1.1')
      return {
        token,
        url: this.versionsUrl,
        business_details: name(this.party),
        party_id: this.party.party_id,
        country_code: this.party.country_code,
      };
    return {
      token,
      url: this.versionsUrl,
      roles: this.options.parties.map((p) => ({
        role: p.role,
        party_id: p.party_id,
        country_code: p.country_code,
        business_details: name(p),
      })),
    };
  }

  // ---------------------------------------------------------------------------------------------
  // server side

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: Awaited<ReturnType<typeof readBody>>;
    try {
      body = await readBody(req);
    } catch {
      // the peer went away mid-request: nothing to answer
      return void res.destroy();
    }
    const { json, malformed } = body;
    const record = this.record(req, json);
    const url = new URL(req.url ?? '/', this.base);
    const version = this.versionOfPath(url.pathname);
    this.checkRequestHeaders(record, url.pathname, version);
    let reply: Reply;
    try {
      // 2.2.1 5: a body that is not JSON is an HTTP 400
      reply = malformed
        ? { status: 400, statusCode: 2000, message: 'body is not JSON' }
        : await this.route(record, url, version);
    } catch (err) {
      reply = { status: 500, statusCode: 3000, message: err instanceof Error ? err.message : String(err) };
    }
    record.status = reply.status;
    // a slow partner: the answer waits, the request already recorded
    const slow = this.slowPaths.find((p) => url.pathname.includes(p.contains));
    if (slow) await new Promise((resolve) => setTimeout(resolve, slow.ms));
    record.answeredAt = Date.now();
    this.send(req, res, reply);
  }

  private record(req: IncomingMessage, body: unknown): RecordedRequest {
    const header = headerOf(req.headers, 'authorization');
    const known = this.identify(header);
    const record: RecordedRequest = {
      seq: ++this.seq,
      receivedAt: Date.now(),
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body,
      tokenForm: header === undefined ? 'missing' : (known?.form ?? 'unknown'),
      ...(known ? { token: known.token } : {}),
    };
    this.received.push(record);
    return record;
  }

  private knownTokens(): Array<{ token: string; kind: TokenKind }> {
    const tokens: Array<{ token: string; kind: TokenKind }> = [];
    for (const t of this.tokensA) tokens.push({ token: t, kind: 'tokenA' });
    for (const t of this.handover) tokens.push({ token: t, kind: 'handover' });
    if (this.current?.registered) tokens.push({ token: this.current.tokenToUs, kind: 'link' });
    return tokens;
  }

  private identify(header: string | undefined): { token: string; kind: TokenKind; form: 'raw' | 'base64' } | undefined {
    const match = header === undefined ? null : /^Token (\S+)$/.exec(header);
    if (!match?.[1]) return undefined;
    const value = match[1];
    for (const { token, kind } of this.knownTokens()) {
      if (value === token) return { token, kind, form: 'raw' };
      if (value === base64(token)) return { token, kind, form: 'base64' };
    }
    return undefined;
  }

  private versionOfPath(pathname: string): OcpiVersion | undefined {
    const v = /^\/ocpi\/([^/]+)/.exec(pathname)?.[1];
    return isVersion(v) && this.options.versions.includes(v) ? v : undefined;
  }

  /** The version whose header rules apply: the path's, else the link's, else the only one supported. */
  private ruleVersion(version: OcpiVersion | undefined): OcpiVersion | undefined {
    if (version) return version;
    if (this.current?.registered) return this.current.version;
    return this.options.versions.length === 1 ? this.options.versions[0] : undefined;
  }

  private formFits(record: RecordedRequest, version: OcpiVersion): boolean {
    return record.tokenForm === (version === '2.2.1' ? 'base64' : 'raw');
  }

  private checkRequestHeaders(record: RecordedRequest, pathname: string, pathVersion: OcpiVersion | undefined): void {
    const where = `${record.method} ${record.path}`;
    const version = this.ruleVersion(pathVersion);
    const auth = headerOf(record.headers, 'authorization');
    // 2.1.1 "Request format" / 2.2.1 4.1.2: every request carries `Authorization: Token ...`
    if (auth === undefined) this.violations.push(`${where}: no Authorization header`);
    else if (!/^Token \S+$/.test(auth))
      this.violations.push(`${where}: Authorization is not "Token <credentials token>"`);
    else if (record.token !== undefined && version !== undefined && !this.formFits(record, version)) {
      // 2.2.1 4.1.2 NOTE: before a version is known a caller may find the form by trial and error;
      // once the path or the link names the version, the form is the version's
      const known = pathVersion !== undefined || this.current?.registered === true;
      if (known)
        this.violations.push(
          `${where}: ${version} wants the token ${version === '2.2.1' ? 'base64' : 'raw'} in Authorization, got it ${record.tokenForm}`,
        );
    }
    if (record.body !== undefined && ['POST', 'PUT', 'PATCH'].includes(record.method)) {
      const type = headerOf(record.headers, 'content-type') ?? '';
      if (!type.toLowerCase().startsWith(CONTENT_JSON))
        this.violations.push(`${where}: body without Content-Type ${CONTENT_JSON}`);
    }
    if (version !== '2.2.1') return;
    // 2.2.1 4.2: X-Request-ID and X-Correlation-ID in every request
    for (const name of ['x-request-id', 'x-correlation-id'])
      if (!headerOf(record.headers, name)) this.violations.push(`${where}: 2.2.1 request without ${name}`);
    // 2.2.1 4.1.8.2: routing headers SHALL NOT be used with configuration modules
    if (this.isConfigurationPath(pathname))
      for (const name of Object.keys(record.headers))
        if (/^ocpi-(to|from)-/.test(name))
          this.violations.push(`${where}: routing header ${name} on a configuration module`);
  }

  private isConfigurationPath(pathname: string): boolean {
    return /^\/ocpi\/(versions|[^/]+|[^/]+\/credentials)\/?$/.test(pathname);
  }

  private async route(record: RecordedRequest, url: URL, version: OcpiVersion | undefined): Promise<Reply> {
    const pathname = url.pathname.replace(/\/$/, '');
    const who = this.identify(headerOf(record.headers, 'authorization'));
    // 2.2.1 4.1.2: a missing or unknown token is a 401; a token in the other version's form is
    // unknown too, as it would be to a partner speaking only that version
    const rules = this.ruleVersion(version);
    if (!who || (rules && !this.formFits(record, rules)))
      return { status: 401, statusCode: 2000, message: 'Unauthorized' };
    if (pathname === '/ocpi/versions') {
      const list = this.options.versions.map((v) => ({ version: v, url: this.versionUrl(v) }));
      return { status: 200, statusCode: 1000, data: list };
    }
    if (!version) return { status: 404, statusCode: 2000, message: 'unknown version' };
    const below = pathname.slice(`/ocpi/${version}`.length);
    if (below === '') return { status: 200, statusCode: 1000, data: this.details(version) };
    if (below === '/credentials') return this.credentialsEndpoint(record, version, who.kind);
    // 2.2.1 4.1.2: CREDENTIALS_TOKEN_A (or a token still being handed over) only opens versions and credentials
    if (who.kind !== 'link') return { status: 401, statusCode: 2000, message: 'Unauthorized' };
    const module = this.modules.find((m) =>
      below.startsWith(this.moduleUrl(version, m).slice(this.versionUrl(version).length)),
    );
    if (!module) return { status: 404, statusCode: 2000, message: 'unknown endpoint' };
    const raw = this.rawAnswers.shift();
    if (raw) return raw;
    const onPath = this.pathFaults.findIndex((f) => url.pathname.includes(f.contains));
    const fault = this.down
      ? { status: 503, statusCode: 3000 }
      : onPath >= 0
        ? this.pathFaults.splice(onPath, 1)[0]
        : this.faults.shift();
    if (fault) return { ...fault, message: 'fault injected by the test' };
    // the tokens Sender's real-time authorization (2.2.1 12.2.2, 2.1.1 tokens 3.1.2)
    const authorize = /\/([^/]+)\/authorize$/.exec(url.pathname);
    if (module.identifier === 'tokens' && record.method === 'POST' && authorize?.[1]) {
      const uid = decodeURIComponent(authorize[1]);
      const allowed = this.authorizations.get(uid) ?? 'ALLOWED';
      // 2.2.1 12.2.2: a token the eMSP does not know is answered with 2004
      if (allowed === 'UNKNOWN') return { status: 404, statusCode: 2004, message: 'Unknown Token' };
      return {
        status: 200,
        statusCode: 1000,
        data: {
          allowed,
          token: { uid },
          ...(version === '2.2.1' ? { authorization_reference: `REF-${uid}` } : {}),
          ...(this.authorizedAt.has(uid) ? { location: this.authorizedAt.get(uid) } : {}),
        },
      };
    }
    // mod_commands POST /{command}: the CPO's CommandResponse, when the test gave one
    const command = /\/commands\/([A-Z_]+)$/.exec(url.pathname)?.[1];
    if (module.identifier === 'commands' && record.method === 'POST' && command && this.options.commandResponse)
      return { status: 200, statusCode: 1000, data: this.options.commandResponse(command, record.body) };
    // mod_cdrs POST: the Receiver answers where it keeps the CDR (its Location header)
    if (module.identifier === 'cdrs' && module.role === 'RECEIVER' && record.method === 'POST') {
      const id = String((record.body as { id?: unknown } | undefined)?.id ?? randomUUID());
      return { status: 200, statusCode: 1000, headers: { Location: `${this.moduleUrl(version, module)}/${id}` } };
    }
    const listed = module.role === 'SENDER' ? (this.served.get(module.identifier) ?? []) : [];
    return { status: 200, statusCode: 1000, ...(record.method === 'GET' ? { data: listed } : {}) };
  }

  // credentials module, server side (2.1.1 credentials.md 1.1-1.4; 2.2.1 7.2.1-7.2.4)

  private async credentialsEndpoint(record: RecordedRequest, version: OcpiVersion, kind: TokenKind): Promise<Reply> {
    if (kind === 'handover') return { status: 401, statusCode: 2000, message: 'Unauthorized' };
    const registered = kind === 'link';
    switch (record.method) {
      case 'GET': {
        const token = registered && this.current ? this.current.tokenToThem : (record.token ?? '');
        return { status: 200, statusCode: 1000, data: this.ownCredentials(token, version) };
      }
      case 'POST':
        if (registered) return { status: 405, statusCode: 2000, message: 'already registered' };
        return this.acceptCredentials(record, version, 'POST');
      case 'PUT':
        if (!registered) return { status: 405, statusCode: 2000, message: 'not registered' };
        return this.acceptCredentials(record, version, 'PUT');
      case 'DELETE':
        if (!registered || !this.current) return { status: 405, statusCode: 2000, message: 'not registered' };
        // "Both parties must end any automated communication": the link's tokens stop working
        this.current = { ...this.current, registered: false };
        return { status: 200, statusCode: 1000 };
      default:
        return { status: 405, statusCode: 2000, message: 'method not allowed' };
    }
  }

  /**
   * POST (register) or PUT (update): fetch the client's versions and details with the token it
   * posted, on this endpoint's version, then answer our credentials with a new token.
   */
  private async acceptCredentials(
    record: RecordedRequest,
    version: OcpiVersion,
    method: 'POST' | 'PUT',
  ): Promise<Reply> {
    const problems = credentialsProblems(record.body, version);
    // 2.2.1 5: valid JSON addressing an existing resource is not an HTTP error
    if (problems.length > 0) return { status: 200, statusCode: 2001, message: problems.join('; ') };
    const theirs = record.body as Credentials;
    const discovered = await this.discover(theirs.url, theirs.token, version);
    if (!('endpoints' in discovered)) return discovered;
    const token = `C-${randomUUID()}`;
    if (method === 'POST' && record.token) this.tokensA.delete(record.token);
    this.current = {
      registered: true,
      version,
      tokenToUs: token,
      tokenToThem: theirs.token,
      credentials: theirs,
      endpoints: discovered.endpoints,
    };
    return { status: 200, statusCode: 1000, data: this.ownCredentials(token, version) };
  }

  /** The server's discovery during POST/PUT; failures are 3001, 3002, 3003 (2.2.1 5.3). */
  private async discover(
    versionsUrl: string,
    token: string,
    version: OcpiVersion,
  ): Promise<{ endpoints: Endpoint[] } | Reply> {
    const unusable = (why: string): Reply => ({
      status: 200,
      statusCode: 3001,
      message: `Unable to use the client's API: ${why}`,
    });
    let versions: OcpiAnswer;
    try {
      versions = await this.request('GET', versionsUrl, token, version);
    } catch (err) {
      return unusable(`versions: ${String(err)}`);
    }
    if (versions.status !== 200 || versions.statusCode !== 1000 || !Array.isArray(versions.data))
      return unusable(`versions answered ${versions.status} ${String(versions.statusCode)}`);
    const offered = versions.data.filter(isRecord);
    const mine = offered.find((v) => v.version === version);
    if (!mine || typeof mine.url !== 'string') return { status: 200, statusCode: 3002, message: 'Unsupported version' };
    this.checkHighestMutual(offered, version);
    let details: OcpiAnswer;
    try {
      details = await this.request('GET', mine.url, token, version);
    } catch (err) {
      return unusable(`details: ${String(err)}`);
    }
    const endpoints = this.endpointsOf(details, version);
    if (!endpoints) return unusable(`details answered ${details.status} ${String(details.statusCode)}`);
    const missing = (this.options.requiredModules ?? []).filter((m) => !endpoints.some((e) => e.identifier === m));
    if (missing.length > 0)
      return { status: 200, statusCode: 3003, message: `expected endpoints missing: ${missing.join(', ')}` };
    return { endpoints };
  }

  /** 7.1.1 (figure 22): the Sender picks the latest mutual version. */
  private checkHighestMutual(offered: Array<Record<string, unknown>>, used: OcpiVersion): void {
    const mutual = offered
      .map((v) => v.version)
      .filter((v): v is OcpiVersion => isVersion(v) && this.options.versions.includes(v));
    const highest = mutual.sort(compareVersions).at(-1);
    if (highest && highest !== used)
      this.violations.push(`credentials exchanged on ${used} although the latest mutual version is ${highest}`);
  }

  private endpointsOf(details: OcpiAnswer, version: OcpiVersion): Endpoint[] | undefined {
    if (details.status !== 200 || details.statusCode !== 1000 || !isRecord(details.data)) return undefined;
    const data = details.data;
    if (data.version !== version)
      this.violations.push(`version details for ${version} say version ${String(data.version)}`);
    if (!Array.isArray(data.endpoints)) return undefined;
    const endpoints: Endpoint[] = [];
    for (const e of data.endpoints) {
      if (!isRecord(e) || typeof e.identifier !== 'string' || typeof e.url !== 'string') {
        this.violations.push(`version details ${version}: malformed endpoint ${JSON.stringify(e)}`);
        continue;
      }
      // 6.2.2: in 2.2.1 every endpoint names its interface role
      if (version === '2.2.1' && e.role !== 'SENDER' && e.role !== 'RECEIVER')
        this.violations.push(`version details 2.2.1: endpoint ${e.identifier} without a SENDER/RECEIVER role`);
      endpoints.push({ identifier: e.identifier, url: e.url, ...(typeof e.role === 'string' ? { role: e.role } : {}) });
    }
    if (!endpoints.some((e) => e.identifier === 'credentials'))
      this.violations.push(`version details ${version}: no credentials endpoint (required for all implementations)`);
    return endpoints;
  }

  private send(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
    const envelope = {
      status_code: reply.statusCode ?? 1000,
      ...(reply.message ? { status_message: reply.message } : {}),
      timestamp: new Date().toISOString(),
      ...(reply.data === undefined ? {} : { data: reply.data }),
    };
    res.statusCode = reply.status;
    res.setHeader('Content-Type', CONTENT_JSON);
    // 2.2.1 4.2: the response carries the request's IDs
    res.setHeader('X-Request-ID', headerOf(req.headers, 'x-request-id') ?? randomUUID());
    res.setHeader('X-Correlation-ID', headerOf(req.headers, 'x-correlation-id') ?? randomUUID());
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
    res.end(reply.raw ?? JSON.stringify(envelope));
  }

  // ---------------------------------------------------------------------------------------------
  // client side

  /** One OCPI request to the peer; checks the answer's envelope and, in 2.2.1, its IDs. */
  async request(
    method: string,
    url: string,
    token: string,
    version: OcpiVersion,
    body?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<OcpiAnswer> {
    const headers: Record<string, string> = { Authorization: authorizationFor(token, version), ...extraHeaders };
    const requestId = randomUUID();
    const correlationId = randomUUID();
    if (version === '2.2.1') {
      headers['X-Request-ID'] = requestId;
      headers['X-Correlation-ID'] = correlationId;
    }
    if (body !== undefined) headers['Content-Type'] = CONTENT_JSON;
    const res = await fetch(url, {
      method,
      headers,
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? (JSON.parse(text) as unknown) : undefined;
    } catch {
      parsed = undefined;
    }
    const answer: OcpiAnswer = { status: res.status, headers: res.headers, body: parsed };
    if (isRecord(parsed)) {
      if (typeof parsed.status_code === 'number') answer.statusCode = parsed.status_code;
      if ('data' in parsed) answer.data = parsed.data;
    }
    this.checkAnswer(`${method} ${new URL(url).pathname}`, answer, version, requestId, correlationId);
    return answer;
  }

  private checkAnswer(
    where: string,
    answer: OcpiAnswer,
    version: OcpiVersion,
    requestId: string,
    correlationId: string,
  ): void {
    // 2.1.1 / 2.2.1 "Response format": every answer (HTTP errors included) is the JSON envelope
    const body = answer.body;
    if (!isRecord(body)) this.violations.push(`answer to ${where} (${answer.status}) is not an OCPI JSON envelope`);
    else {
      if (!Number.isInteger(body.status_code)) this.violations.push(`answer to ${where}: status_code missing`);
      if (typeof body.timestamp !== 'string' || Number.isNaN(Date.parse(body.timestamp)))
        this.violations.push(`answer to ${where}: timestamp missing`);
    }
    if (version !== '2.2.1') return;
    if (answer.headers.get('x-request-id') !== requestId)
      this.violations.push(
        `answer to ${where}: X-Request-ID ${String(answer.headers.get('x-request-id'))} is not ours`,
      );
    if (answer.headers.get('x-correlation-id') !== correlationId)
      this.violations.push(
        `answer to ${where}: X-Correlation-ID ${String(answer.headers.get('x-correlation-id'))} is not ours`,
      );
  }

  /** The version whose Authorization form we use on a versions URL, before any version is agreed. */
  private get preferredVersion(): OcpiVersion {
    const sorted = [...this.options.versions].sort(compareVersions);
    const last = sorted.at(-1);
    if (!last) throw new Error('no version');
    return last;
  }

  /** GET versions, pick the latest mutual version, GET its details (7.1.1 figure 22). */
  private async discoverPeer(
    versionsUrl: string,
    token: string,
    versionForHeader: OcpiVersion,
  ): Promise<{ version: OcpiVersion; endpoints: Endpoint[] }> {
    const versions = await this.request('GET', versionsUrl, token, versionForHeader);
    if (versions.status !== 200 || versions.statusCode !== 1000 || !Array.isArray(versions.data))
      throw new SimulatorError(`versions answered ${versions.status} ${JSON.stringify(versions.body)}`);
    const offered = versions.data.filter(isRecord);
    const mutual = offered
      .filter((v) => isVersion(v.version) && this.options.versions.includes(v.version) && typeof v.url === 'string')
      .sort((a, b) => compareVersions(String(a.version), String(b.version)));
    const pick = mutual.at(-1);
    if (!pick || !isVersion(pick.version) || typeof pick.url !== 'string')
      throw new SimulatorError(`no mutual version in ${JSON.stringify(versions.data)}`);
    const details = await this.request('GET', pick.url, token, pick.version);
    const endpoints = this.endpointsOf(details, pick.version);
    if (!endpoints)
      throw new SimulatorError(`version details answered ${details.status} ${JSON.stringify(details.body)}`);
    return { version: pick.version, endpoints };
  }

  private credentialsUrl(endpoints: Endpoint[]): string {
    const found = endpoints.find((e) => e.identifier === 'credentials');
    if (!found) throw new SimulatorError('the peer lists no credentials endpoint');
    return found.url;
  }

  /**
   * The Sender's side of the registration (2.2.1 7.1.1; 2.1.1 credentials.md 3.1), starting from
   * the peer's versions URL and the CREDENTIALS_TOKEN_A it handed us.
   */
  async registerWith(versionsUrl: string, tokenA: string): Promise<HandshakeResult> {
    const { version, endpoints } = await this.discoverPeer(versionsUrl, tokenA, this.preferredVersion);
    const missing = (this.options.requiredModules ?? []).filter((m) => !endpoints.some((e) => e.identifier === m));
    // 7.1.6: a Sender missing expected endpoints does not POST
    if (missing.length > 0) throw new SimulatorError(`the peer lacks ${missing.join(', ')}`);
    const tokenB = `B-${randomUUID()}`;
    const answer = await this.exchange('POST', this.credentialsUrl(endpoints), tokenA, version, tokenB);
    const result: HandshakeResult = { answer, version, tokenGiven: tokenB };
    const theirs = this.acceptedCredentials(answer, version, 'POST');
    if (!theirs) return result;
    if (theirs.token === tokenA)
      this.violations.push('POST credentials answered CREDENTIALS_TOKEN_A instead of a new token');
    this.current = {
      registered: true,
      version,
      tokenToUs: tokenB,
      tokenToThem: theirs.token,
      credentials: theirs,
      endpoints,
    };
    return { ...result, tokenReceived: theirs.token };
  }

  /**
   * PUT of new credentials on the latest mutual version (2.2.1 7.1.2, 7.1.4): the peer must fetch
   * our endpoints again with the new token and answer a new token of its own.
   */
  async rotate(): Promise<HandshakeResult> {
    const link = this.requireLink();
    const versionsUrl = link.credentials.url;
    const { version, endpoints } = await this.discoverPeer(versionsUrl, link.tokenToThem, link.version);
    const fresh = `B-${randomUUID()}`;
    const answer = await this.exchange('PUT', this.credentialsUrl(endpoints), link.tokenToThem, version, fresh);
    const result: HandshakeResult = { answer, version, tokenGiven: fresh };
    const theirs = this.acceptedCredentials(answer, version, 'PUT');
    if (!theirs) return result;
    if (theirs.token === link.tokenToThem)
      this.violations.push('PUT credentials answered the old token instead of a new one');
    this.current = {
      registered: true,
      version,
      tokenToUs: fresh,
      tokenToThem: theirs.token,
      credentials: theirs,
      endpoints,
    };
    return { ...result, tokenReceived: theirs.token };
  }

  /** DELETE of our credentials at the peer (unregister, 7.2.4). */
  async unregister(): Promise<OcpiAnswer> {
    const link = this.requireLink();
    const answer = await this.request('DELETE', this.credentialsUrl(link.endpoints), link.tokenToThem, link.version);
    if (answer.status === 200 && answer.statusCode === 1000) this.current = { ...link, registered: false };
    return answer;
  }

  /**
   * A call to one of the peer's module endpoints found in its version details, with the link's
   * token (or `options.token`); in 2.2.1 with the routing headers of a direct request (4.1.8.6).
   */
  async call(
    method: string,
    identifier: string,
    pathSuffix = '',
    body?: unknown,
    options: CallOptions = {},
  ): Promise<OcpiAnswer> {
    const link = this.current;
    if (!link) throw new SimulatorError('no link with the peer');
    const candidates = link.endpoints.filter(
      (e) => e.identifier === identifier && (!options.role || e.role === options.role),
    );
    const endpoint = candidates[0];
    if (!endpoint)
      throw new SimulatorError(`the peer lists no ${identifier} endpoint${options.role ? ` (${options.role})` : ''}`);
    const from = options.from ?? this.party;
    const routing: Record<string, string> = {};
    if (link.version === '2.2.1') {
      const to = this.counterpart(link, from);
      routing['OCPI-from-country-code'] = from.country_code;
      routing['OCPI-from-party-id'] = from.party_id;
      if (to) {
        routing['OCPI-to-country-code'] = to.country_code;
        routing['OCPI-to-party-id'] = to.party_id;
      }
    }
    const url = `${endpoint.url.replace(/\/$/, '')}${pathSuffix}`;
    return this.request(method, url, options.token ?? link.tokenToThem, link.version, body, routing);
  }

  /** The peer's party facing `from`: the one with the opposite role, else its first. */
  private counterpart(link: PeerLink, from: SimulatedParty): { country_code: string; party_id: string } | undefined {
    const roles = link.credentials.roles ?? [];
    const opposite = from.role === 'CPO' ? 'EMSP' : 'CPO';
    return roles.find((r) => r.role === opposite) ?? roles[0];
  }

  private requireLink(): PeerLink {
    if (!this.current?.registered) throw new SimulatorError('not registered with the peer');
    return this.current;
  }

  /** POST or PUT of our credentials carrying `ownToken`; the peer may fetch our endpoints with it meanwhile. */
  private async exchange(
    method: 'POST' | 'PUT',
    url: string,
    token: string,
    version: OcpiVersion,
    ownToken: string,
  ): Promise<OcpiAnswer> {
    this.handover.add(ownToken);
    const before = this.seq;
    try {
      const answer = await this.request(method, url, token, version, this.ownCredentials(ownToken, version));
      if (answer.status === 200 && answer.statusCode === 1000) this.checkRefetched(method, before, ownToken, version);
      return answer;
    } finally {
      this.handover.delete(ownToken);
    }
  }

  /** 7.2.2 / 7.2.3: "The server must (also) fetch the client's endpoints", with the token we just gave. */
  private checkRefetched(method: string, since: number, ownToken: string, version: OcpiVersion): void {
    const seen = this.receivedSince(since).filter(
      (r) => r.method === 'GET' && r.token === ownToken && r.status === 200,
    );
    const paths = seen.map((r) => new URL(r.path, this.base).pathname.replace(/\/$/, ''));
    if (!paths.includes('/ocpi/versions'))
      this.violations.push(`${method} credentials: the server did not fetch our versions with the token we sent`);
    if (!paths.includes(`/ocpi/${version}`))
      this.violations.push(
        `${method} credentials: the server did not fetch our ${version} details with the token we sent`,
      );
  }

  private acceptedCredentials(answer: OcpiAnswer, version: OcpiVersion, method: string): Credentials | undefined {
    if (answer.status !== 200 || answer.statusCode !== 1000) return undefined;
    const problems = credentialsProblems(answer.data, version);
    if (problems.length > 0) {
      this.violations.push(`${method} credentials answered invalid credentials: ${problems.join('; ')}`);
      return undefined;
    }
    return answer.data as Credentials;
  }
}

export function startSimulator(options: SimulatorOptions): Promise<OcpiSimulator> {
  return OcpiSimulator.start(options);
}
