import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { request as httpRequest, validateHeaderValue, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { classifyAddress, policyAllows, type AddressClass, type DestinationPolicy } from './address-class.js';
import { PartnerCallError, type PartnerFailure } from './partner-call-error.js';

/**
 * The one way out to a partner's HTTP server (docs/SECURITY.md). Every call:
 * - goes only to http: or https: URLs whose addresses PARTNER_URL_POLICY allows: an IP literal is
 *   checked before anything else, a host name is resolved by us (every address it resolves to
 *   must be allowed) and the socket connects to the addresses we checked — the `lookup` hook of
 *   the socket is the check, so a second DNS answer cannot slip in between (DNS rebinding);
 * - has one time limit for all of it: DNS, connect, headers and body (PARTNER_TIMEOUT_MS);
 * - reads at most PARTNER_RESPONSE_LIMIT bytes: a larger Content-Length is refused before the body
 *   is read, and a body that grows past the limit aborts the connection at that chunk;
 * - never follows a redirect (its target would skip the destination check);
 * - fails with a PartnerCallError whose message is a category only; the detail goes to our log.
 *
 * node:http rather than fetch: fetch offers neither the socket's `lookup` hook nor a way to stop
 * the read mid-body without buffering what undici already took in. No connection pooling: a
 * partner call is rare enough that a fresh, freshly checked connection costs nothing that matters.
 */

export interface PartnerHttpOptions {
  timeoutMs: number;
  responseLimitBytes: number;
  policy: DestinationPolicy;
}

export interface PartnerHttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface PartnerHttpReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Raised inside the socket's lookup hook; a plain Error because the hook's callback wants one. */
class RefusedDestination extends Error {
  override readonly name = 'RefusedDestination';
}

/** A failed call, with the category the caller sees and the detail our log gets. */
type Failure = (reason: PartnerFailure, detail: string, httpStatus?: number) => PartnerCallError;

/** A call's checked destination: the URL, its host, and the class of the host when it is an IP literal. */
interface Destination {
  url: URL;
  host: string;
  literal: AddressClass | undefined;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export class PartnerHttp {
  constructor(private readonly opts: PartnerHttpOptions) {}

  send(call: PartnerHttpRequest): Promise<PartnerHttpReply> {
    const where = `${call.method} ${call.url}`;
    const failure: Failure = (reason, detail, httpStatus) =>
      new PartnerCallError(3001, reason, {
        detail: `${where}: ${detail}`,
        ...(httpStatus === undefined ? {} : { httpStatus }),
      });
    const destination = this.destination(call, failure);
    if (destination instanceof PartnerCallError) return Promise.reject(destination);
    return this.exchange(call, destination, failure);
  }

  /** Where a call goes, checked against the policy before any socket exists, or why it may not be made. */
  private destination(call: PartnerHttpRequest, failure: Failure): Destination | PartnerCallError {
    let url: URL;
    try {
      url = new URL(call.url);
    } catch {
      return failure('destination refused', 'not a URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return failure('destination refused', `scheme ${url.protocol}`);
    // the WHATWG parser already turned 0x7f.1, 2130706433 and the like into dotted IPv4
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const literal = classifyAddress(host);
    if (literal !== undefined && !policyAllows(this.opts.policy, literal)) {
      return failure('destination refused', `${literal} address`);
    }

    // http.request throws on a header it cannot send (a partner's token with a line break or a
    // non-Latin-1 character, sent raw to a 2.1.1 partner): refuse it here as a failed call
    for (const [name, value] of Object.entries(call.headers)) {
      try {
        validateHeaderValue(name, value);
      } catch {
        return failure('invalid request', `header ${name} cannot be sent`);
      }
    }
    return { url, host, literal };
  }

  /** The request and its reply, within the time limit; the first outcome settles it. */
  private exchange(call: PartnerHttpRequest, to: Destination, failure: Failure): Promise<PartnerHttpReply> {
    const { url, host, literal } = to;
    return new Promise<PartnerHttpReply>((resolve, reject) => {
      let settled = false;
      const finish = (outcome: { reply: PartnerHttpReply } | { error: PartnerCallError }): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if ('reply' in outcome) resolve(outcome.reply);
        else {
          // destroying the request closes the socket: the partner stops sending at once
          req.destroy();
          reject(outcome.error);
        }
      };
      const fail = (reason: PartnerFailure, detail: string, httpStatus?: number): void =>
        finish({ error: failure(reason, detail, httpStatus) });

      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(
        {
          method: call.method,
          hostname: host,
          ...(url.port ? { port: Number(url.port) } : {}),
          path: `${url.pathname}${url.search}`,
          headers: {
            ...call.headers,
            ...(call.body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(call.body)) }),
          },
          agent: false,
          // an IP literal was checked above and is connected to as it is (no lookup happens)
          ...(literal === undefined ? { lookup: this.checkedLookup } : {}),
        },
        (res) => this.read(res, { finish, fail }),
      );
      const timer = setTimeout(
        () => fail('timeout', `no complete reply within ${this.opts.timeoutMs} ms`),
        this.opts.timeoutMs,
      );
      req.on('error', (err) => {
        if (err instanceof RefusedDestination) fail('destination refused', err.message);
        else fail('no connection', err.message);
      });
      req.end(call.body);
    });
  }

  private read(
    res: IncomingMessage,
    on: {
      finish: (o: { reply: PartnerHttpReply }) => void;
      fail: (reason: PartnerFailure, detail: string, httpStatus?: number) => void;
    },
  ): void {
    const status = res.statusCode ?? 0;
    const limit = this.opts.responseLimitBytes;
    res.on('error', (err) => on.fail('no connection', `reply broken off: ${err.message}`));
    // without 'end', a reply cut short only shows as a close with the message incomplete
    res.on('close', () => {
      if (!res.complete) on.fail('no connection', 'reply broken off');
    });
    if (status >= 300 && status < 400) return on.fail('redirect refused', `HTTP ${status}`, status);
    const declared = Number(res.headers['content-length'] ?? NaN);
    if (declared > limit) return on.fail('reply too large', `Content-Length ${declared} > ${limit}`, status);
    let chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        chunks = [];
        on.fail('reply too large', `more than ${limit} bytes`, status);
        return;
      }
      chunks.push(chunk);
    });
    res.on('end', () => on.finish({ reply: { status, headers: res.headers, body: Buffer.concat(chunks, size) } }));
  }

  /**
   * The socket's name resolution: every address the name resolves to must be allowed, and only
   * those addresses are handed to the socket. `options.all` is set when the socket tries
   * several addresses (autoSelectFamily).
   */
  private readonly checkedLookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true }, (err, found) => {
      if (err || found.length === 0) {
        // one category for "no such name" and "not allowed": the caller must not learn which
        callback(new RefusedDestination(`${hostname} does not resolve (${err?.code ?? 'no address'})`), []);
        return;
      }
      for (const a of found) {
        const cls = classifyAddress(a.address) ?? 'reserved';
        if (!policyAllows(this.opts.policy, cls)) {
          callback(new RefusedDestination(`${hostname} resolves to a ${cls} address`), []);
          return;
        }
      }
      const family = options.family === 4 || options.family === 6 ? options.family : 0;
      const usable = family === 0 ? found : found.filter((a) => a.family === family);
      const first = usable[0];
      if (!first) {
        callback(new RefusedDestination(`${hostname} has no IPv${family} address`), []);
        return;
      }
      if (options.all) callback(null, usable);
      else callback(null, first.address, first.family);
    });
  };
}
