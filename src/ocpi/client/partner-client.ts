import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import Type, { type Static } from '#typebox';
import { compileLazily } from '../../lazy-compile.js';
import { byteSize } from '../../../config/byte-size.js';
import type { Config } from '../../../config/index.js';
import { nextLink } from '../../gateway/paging.js';
import { jsonNestingExceeds } from '../../json-depth.js';
import { authorizationHeader, type PartyIdentity } from '../core/auth.js';
import type { OcpiVersion } from '../core/envelope.js';
import { PartnerCallError } from './partner-call-error.js';
import { PartnerHttp, type PartnerHttpOptions } from './partner-http.js';

export { PartnerCallError, type PartnerFailure } from './partner-call-error.js';

/**
 * Outbound OCPI calls to a partner: discovery of its versions URL and version details, the
 * client side of the credentials handshake, and paged pulls. Every byte goes through
 * PartnerHttp (time limit, size limit, no redirects, destination policy); this class adds the
 * OCPI layer: the token header of the version, the envelope, the status codes.
 */

export const SUPPORTED_VERSIONS: readonly OcpiVersion[] = ['2.2.1', '2.1.1'];

/**
 * Deepest nesting read from a partner: an OCPI Location with its EVSEs, connectors and open
 * objects (images, energy mix) inside an envelope stays far below it.
 */
export const REPLY_MAX_DEPTH = 64;

const AnyEnvelope = Type.Object({
  status_code: Type.Integer(),
  status_message: Type.Optional(Type.String()),
  data: Type.Optional(Type.Unknown()),
});
const checkEnvelope = compileLazily(AnyEnvelope);
const VersionList = Type.Array(Type.Object({ version: Type.String(), url: Type.String() }));
const checkVersionList = compileLazily(VersionList);
const Details = Type.Object({
  version: Type.String(),
  endpoints: Type.Array(
    Type.Object({ identifier: Type.String(), role: Type.Optional(Type.String()), url: Type.String() }),
  ),
});
const checkDetails = compileLazily(Details);

export type DiscoveredEndpoint = { version: OcpiVersion; identifier: string; role?: string; url: string };

export interface Discovery {
  /** the highest version both sides support */
  version: OcpiVersion;
  /** endpoints of every version both sides support */
  endpoints: DiscoveredEndpoint[];
}

export interface CallResult {
  status: number;
  envelope: Static<typeof AnyEnvelope>;
  headers: IncomingHttpHeaders;
}

/** The limits of outbound calls, from the settings (docs/OCPI.md "Outbound calls"). */
export function partnerHttpOptions(
  config: Pick<Config, 'PARTNER_TIMEOUT_MS' | 'PARTNER_RESPONSE_LIMIT' | 'PARTNER_URL_POLICY'>,
): PartnerHttpOptions {
  return {
    timeoutMs: config.PARTNER_TIMEOUT_MS,
    responseLimitBytes: byteSize(config.PARTNER_RESPONSE_LIMIT),
    policy: config.PARTNER_URL_POLICY,
  };
}

function unexpected(where: string, what: string): PartnerCallError {
  return new PartnerCallError(3001, 'unexpected data', { detail: `${where}: ${what}` });
}

/**
 * The next page's URL of a Link target read on the page at `pageUrl`. RFC 8288 (3) makes the
 * target a URI-Reference, resolved against the request's URL (RFC 3986 5): a relative one
 * (`</ocpi/2.2.1/locations?offset=2>`) was called as it was and refused as "not a URL", and the
 * pull stopped after page 1. The resolved URL goes through the same destination check as any
 * other (PARTNER_URL_POLICY); one that does not resolve says so.
 */
function resolvedNext(pageUrl: string, target: string | undefined): string | undefined {
  if (target === undefined) return undefined;
  try {
    return new URL(target, pageUrl).href;
  } catch {
    throw new PartnerCallError(3001, 'unexpected data', {
      message: `the partner's next page (Link rel="next") is not a URL reference we can resolve`,
      detail: `GET ${pageUrl}: Link rel="next" ${target} does not resolve against it`,
    });
  }
}

/**
 * What a call carries besides its token (OCPI 2.2.1 transport_and_format, "Unique message IDs"
 * and "Message Routing"): every call has a fresh X-Request-ID and an X-Correlation-ID, shared by
 * the calls of one action (the pages of a pull) when given. The routing headers go only on calls
 * of 2.2.1 functional modules, never on versions or credentials, so only when `route` is given.
 */
export interface CallTrace {
  correlationId?: string;
  route?: { from: PartyIdentity; to: PartyIdentity };
}

function traceHeaders(version: OcpiVersion, trace: CallTrace | undefined): Record<string, string> {
  const headers: Record<string, string> = {
    'X-Request-ID': randomUUID(),
    'X-Correlation-ID': trace?.correlationId ?? randomUUID(),
  };
  const route = trace?.route;
  if (route && version === '2.2.1') {
    headers['OCPI-from-country-code'] = route.from.country_code;
    headers['OCPI-from-party-id'] = route.from.party_id;
    headers['OCPI-to-country-code'] = route.to.country_code;
    headers['OCPI-to-party-id'] = route.to.party_id;
  }
  return headers;
}

export class PartnerClient {
  private readonly http: PartnerHttp;
  constructor(opts: PartnerHttpOptions) {
    this.http = new PartnerHttp(opts);
  }

  /** One call; any HTTP status, as long as the reply is an OCPI envelope. */
  async call(
    method: string,
    url: string,
    token: string,
    version: OcpiVersion,
    body?: unknown,
    trace?: CallTrace,
  ): Promise<CallResult> {
    const reply = await this.http.send({
      method,
      url,
      headers: {
        Authorization: authorizationHeader(token, version),
        Accept: 'application/json',
        ...traceHeaders(version, trace),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const where = `${method} ${url}`;
    if (reply.status === 405)
      throw new PartnerCallError(3001, 'error answer', { httpStatus: 405, detail: `${where}: HTTP 405` });
    if (jsonNestingExceeds(reply.body, REPLY_MAX_DEPTH)) {
      throw new PartnerCallError(3001, 'reply too deep', {
        httpStatus: reply.status,
        detail: `${where}: nested deeper than ${REPLY_MAX_DEPTH}`,
      });
    }
    let json: unknown;
    try {
      json = JSON.parse(reply.body.toString('utf8'));
    } catch {
      json = undefined;
    }
    if (!checkEnvelope.Check(json)) {
      throw new PartnerCallError(3001, 'not an OCPI envelope', {
        httpStatus: reply.status,
        detail: `${where}: HTTP ${reply.status}, ${reply.body.length} bytes`,
      });
    }
    return { status: reply.status, envelope: json, headers: reply.headers };
  }

  /** A successful (HTTP 2xx, status_code 1xxx) call's `data`. */
  async data(
    method: string,
    url: string,
    token: string,
    version: OcpiVersion,
    body?: unknown,
    trace?: CallTrace,
  ): Promise<CallResult> {
    const result = await this.call(method, url, token, version, body, trace);
    const { status, envelope } = result;
    if (status < 200 || status >= 300 || envelope.status_code < 1000 || envelope.status_code >= 2000) {
      throw new PartnerCallError(3001, 'error answer', {
        httpStatus: status,
        detail: `${method} ${url}: HTTP ${status}, status_code ${envelope.status_code}`,
        partnerStatusCode: envelope.status_code,
      });
    }
    return result;
  }

  /**
   * GET the versions URL, keep the versions both sides support, GET their details.
   * `headerVersion` decides how the token is sent to the versions URL. The link's version is the
   * highest both support, or `use` (a partner that registered or rotated on our credentials
   * endpoint of that version: OCPI's POST "initiates the registration process for this
   * endpoint's version", a PUT "will switch to the version that contains this credentials
   * endpoint"); 3002 when the partner does not offer it. Then only that version's details are
   * read, so that every call on the link goes to the partner's endpoints of its version.
   */
  async discover(
    versionsUrl: string,
    token: string,
    headerVersion: OcpiVersion,
    use?: OcpiVersion,
    /** why `use`, for the 3002 when the partner does not list it */
    useReason = `called on our ${use ?? ''} credentials endpoint`,
  ): Promise<Discovery> {
    const list = (await this.data('GET', versionsUrl, token, headerVersion)).envelope.data;
    if (!checkVersionList.Check(list)) throw unexpected(`GET ${versionsUrl}`, 'data is not a list of versions');
    const mutual = SUPPORTED_VERSIONS.filter((v) => list.some((x) => x.version === v));
    const highest = mutual[0];
    // what the partner offers stays in our log: the caller only learns what we support
    const offered = `partner offers ${
      list
        .map((x) => x.version)
        .join(', ')
        .slice(0, 200) || 'no versions'
    }`;
    if (!highest) {
      const message = `no version in common; we support ${SUPPORTED_VERSIONS.join(', ')}`;
      throw new PartnerCallError(3002, 'no common version', { message, detail: offered });
    }
    if (use !== undefined && !mutual.includes(use)) {
      const message = `${useReason}, but the versions URL does not list ${use}`;
      throw new PartnerCallError(3002, 'no common version', { message, detail: offered });
    }
    const endpoints: DiscoveredEndpoint[] = [];
    // a link of `use` is called on that version's endpoints only (endpointOf takes the highest)
    for (const version of use === undefined ? mutual : [use]) {
      const entry = list.find((x) => x.version === version);
      if (!entry) continue;
      const details = (await this.data('GET', entry.url, token, version)).envelope.data;
      if (!checkDetails.Check(details)) throw unexpected(`GET ${entry.url}`, 'data is not a version detail');
      for (const e of details.endpoints)
        endpoints.push({ version, identifier: e.identifier, url: e.url, ...(e.role ? { role: e.role } : {}) });
    }
    // OCPI 3003: "no matching endpoints or expected endpoints missing ... if the two parties do
    // not have any mutual modules": none at all, or no credentials endpoint, the one module every
    // implementation has (without it the link could never be updated or ended)
    const details = use ?? mutual.join(', ');
    if (endpoints.length === 0)
      throw new PartnerCallError(3003, 'no endpoints', {
        message: `the partner's version details (${details}) list no endpoints`,
      });
    if (!endpoints.some((e) => e.identifier === 'credentials'))
      throw new PartnerCallError(3003, 'no endpoints', {
        message: `the partner's version details (${details}) list no credentials endpoint`,
      });
    return { version: use ?? highest, endpoints };
  }

  /**
   * Follows `Link: rel="next"` from `url`, one page at a time: the caller stores a page before
   * the next is read, so memory holds one page (at most PARTNER_RESPONSE_LIMIT) however many
   * pages the partner has. A next page that is one already read (a Sender whose links loop)
   * ends the pages with a PartnerCallError once the pages before it were handed out; else a
   * loop would be read again and again up to `maxPages`.
   */
  async *pages(
    url: string,
    token: string,
    version: OcpiVersion,
    trace?: CallTrace,
    maxPages = 1000,
  ): AsyncGenerator<unknown[]> {
    let next: string | undefined = url;
    let pages = 0;
    // the pages of one pull share one correlation id
    const shared: CallTrace = { ...trace, correlationId: trace?.correlationId ?? randomUUID() };
    const read = new Set<string>();
    while (next && pages < maxPages) {
      const { envelope, headers }: CallResult = await this.data('GET', next, token, version, undefined, shared);
      const data: unknown = envelope.data;
      if (!Array.isArray(data)) throw unexpected(`GET ${next}`, 'data is not a list');
      pages++;
      // as resolved Links are written (a link back to the first page is that page)
      read.add(URL.canParse(next) ? new URL(next).href : next);
      yield data;
      const link = headers.link;
      const after = resolvedNext(next, nextLink(Array.isArray(link) ? link.join(', ') : (link ?? null)));
      if (after !== undefined && read.has(after))
        throw unexpected(`GET ${next}`, `its next page (Link rel="next") ${after} was read before in this pull`);
      next = after;
    }
  }
}

/**
 * The endpoint of `identifier` in the highest version we support that has one (the endpoints
 * of a discovery, or those the partner actor keeps, whose version is a plain string). With
 * `role`, the module's interface of that role: a 2.2.1 endpoint names it (a platform may list both
 * for one module); a 2.1.1 one does not, the partner's role decides which interface it is.
 */
export function endpointOf(
  endpoints: ReadonlyArray<{ version: string; identifier: string; role?: string; url: string }>,
  identifier: string,
  role?: 'SENDER' | 'RECEIVER',
): { version: OcpiVersion; url: string } | undefined {
  for (const version of SUPPORTED_VERSIONS) {
    const e = endpoints.find(
      (x) => x.version === version && x.identifier === identifier && (!role || x.role === undefined || x.role === role),
    );
    if (e) return { version, url: e.url };
  }
  return undefined;
}
