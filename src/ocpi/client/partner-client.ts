import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { authorizationHeader } from '../auth.js';
import type { OcpiVersion } from '../envelope.js';
import { nextLink } from '../pagination.js';

/**
 * Outbound OCPI calls to a partner: discovery of its versions URL and version details, the
 * client side of the credentials handshake, and paged pulls. Every call has a timeout
 * (AbortSignal.timeout), so a partner that does not answer gives an error, not a hang.
 */

export const SUPPORTED_VERSIONS: readonly OcpiVersion[] = ['2.2.1', '2.1.1'];

/** Why a call to a partner failed, as the OCPI status code to answer with. */
export class PartnerCallError extends Error {
  override readonly name = 'PartnerCallError';
  constructor(
    /** 3001 unable to use the client's API, 3002 unsupported version */
    readonly code: 3001 | 3002,
    message: string,
    /** the partner's HTTP status, when it answered */
    readonly httpStatus?: number,
  ) {
    super(message);
  }
}

const AnyEnvelope = Type.Object({ status_code: Type.Integer(), status_message: Type.Optional(Type.String()), data: Type.Optional(Type.Unknown()) });
const checkEnvelope = Compile(AnyEnvelope);
const VersionList = Type.Array(Type.Object({ version: Type.String(), url: Type.String() }));
const checkVersionList = Compile(VersionList);
const Details = Type.Object({
  version: Type.String(),
  endpoints: Type.Array(Type.Object({ identifier: Type.String(), role: Type.Optional(Type.String()), url: Type.String() })),
});
const checkDetails = Compile(Details);

export type DiscoveredEndpoint = { version: string; identifier: string; role?: string; url: string };

export interface Discovery {
  /** the highest version both sides support */
  version: OcpiVersion;
  /** endpoints of every version both sides support */
  endpoints: DiscoveredEndpoint[];
}

export interface PartnerClientOptions {
  timeoutMs?: number;
}

export interface CallResult {
  status: number;
  envelope: Static<typeof AnyEnvelope>;
  headers: Headers;
}

export class PartnerClient {
  private readonly timeoutMs: number;
  constructor(opts: PartnerClientOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 5000;
  }

  async call(method: string, url: string, token: string, version: OcpiVersion, body?: unknown): Promise<CallResult> {
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          Authorization: authorizationHeader(token, version),
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'error',
      });
    } catch (err) {
      const reason = err instanceof Error && err.name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : String(err instanceof Error ? err.message : err);
      throw new PartnerCallError(3001, `${method} ${url}: ${reason}`);
    }
    if (res.status === 405) throw new PartnerCallError(3001, `${method} ${url}: method not allowed`, 405);
    let json: unknown;
    try {
      json = await res.json();
    } catch {
      throw new PartnerCallError(3001, `${method} ${url}: HTTP ${res.status} without a JSON body`);
    }
    if (!checkEnvelope.Check(json)) throw new PartnerCallError(3001, `${method} ${url}: HTTP ${res.status} without an OCPI envelope`);
    return { status: res.status, envelope: json, headers: res.headers };
  }

  /** A successful (HTTP 2xx, status_code 1xxx) call's `data`. */
  async data(method: string, url: string, token: string, version: OcpiVersion, body?: unknown): Promise<CallResult> {
    const result = await this.call(method, url, token, version, body);
    const { status, envelope } = result;
    if (status < 200 || status >= 300 || envelope.status_code < 1000 || envelope.status_code >= 2000) {
      throw new PartnerCallError(3001, `${method} ${url}: HTTP ${status}, status_code ${envelope.status_code} ${envelope.status_message ?? ''}`.trim());
    }
    return result;
  }

  /**
   * GET the versions URL, keep the versions both sides support, GET their details.
   * `headerVersion` decides how the token is sent to the versions URL.
   */
  async discover(versionsUrl: string, token: string, headerVersion: OcpiVersion): Promise<Discovery> {
    const list = (await this.data('GET', versionsUrl, token, headerVersion)).envelope.data;
    if (!checkVersionList.Check(list)) throw new PartnerCallError(3001, `GET ${versionsUrl}: data is not a list of versions`);
    const mutual = SUPPORTED_VERSIONS.filter((v) => list.some((x) => x.version === v));
    const highest = mutual[0];
    if (!highest) throw new PartnerCallError(3002, `partner offers ${list.map((x) => x.version).join(', ') || 'no versions'}; we support ${SUPPORTED_VERSIONS.join(', ')}`);
    const endpoints: DiscoveredEndpoint[] = [];
    for (const version of mutual) {
      const entry = list.find((x) => x.version === version);
      if (!entry) continue;
      const details = (await this.data('GET', entry.url, token, version)).envelope.data;
      if (!checkDetails.Check(details)) throw new PartnerCallError(3001, `GET ${entry.url}: data is not a version detail`);
      for (const e of details.endpoints) endpoints.push({ version, identifier: e.identifier, url: e.url, ...(e.role ? { role: e.role } : {}) });
    }
    return { version: highest, endpoints };
  }

  /** Follows `Link: rel="next"` from `url` and returns every object of every page. */
  async pullAll(url: string, token: string, version: OcpiVersion, maxPages = 1000): Promise<{ objects: unknown[]; pages: number }> {
    const objects: unknown[] = [];
    let next: string | undefined = url;
    let pages = 0;
    while (next && pages < maxPages) {
      const { envelope, headers } = await this.data('GET', next, token, version);
      if (!Array.isArray(envelope.data)) throw new PartnerCallError(3001, `GET ${next}: data is not a list`);
      objects.push(...(envelope.data as unknown[]));
      pages++;
      next = nextLink(headers.get('link'));
    }
    return { objects, pages };
  }
}

/** The endpoint of `identifier` in the highest version that has one. */
export function endpointOf(endpoints: readonly DiscoveredEndpoint[], identifier: string): DiscoveredEndpoint | undefined {
  for (const v of SUPPORTED_VERSIONS) {
    const e = endpoints.find((x) => x.version === v && x.identifier === identifier);
    if (e) return e;
  }
  return undefined;
}
