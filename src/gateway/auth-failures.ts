import type { Context } from 'koa';
import type { Logger } from 'pino';
import { LoginThrottle } from '../ocpp/login-throttle.js';
import { clientAddress, throttledAddress } from '../ocpp/upgrade.js';
import { HttpError, OcpiError } from './errors.js';

/**
 * What a success takes off an address's count of failures: one. A guesser holding one real token
 * can so guess at half its request rate (one guess, one real request, over and over); the tokens
 * it would guess are ours, 256 random bits each, out of reach at any rate, and the operator's API
 * key is one key, which no holder needs to guess. Taking off a tenth of one made a partner's
 * ordinary mix of refusals and successes (a rotation's old token still in use somewhere, the
 * refusals checked after one) reach the limit and hold back all of its traffic.
 */
const SUCCESS_WEIGHT = 1;

export interface AuthFailureOptions {
  /** failed authentications from one address, per surface, before it is refused for a while (HTTP_AUTH_FAILURES) */
  maxFailures: number;
  /** TRUST_PROXY: the address is the last X-Forwarded-For entry (the one our proxy wrote) */
  trustProxy: boolean;
  log: Logger;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * Failed authentications on the HTTP surfaces (docs/SECURITY.md "Guessing credentials"): the
 * `/v1` API key, the OCPI tokens (a token looked up where none is needed too) and `/metrics`'
 * token. An address whose failures on one surface, less one for each success (SUCCESS_WEIGHT),
 * reach `maxFailures` is answered 429 with `Retry-After` on that surface for a
 * back-off that doubles with each further failure (1 s up to 5 min), its credentials not checked
 * meanwhile, unless the surface vouches for them (`guard`). A request that carries no credentials is no guess and does not count. The table is
 * the chargers' login throttle (bounded: 10,000 addresses, the stalest forgotten first), one per
 * process.
 */
export class AuthFailures {
  private readonly throttle: LoginThrottle;

  constructor(private readonly opts: AuthFailureOptions) {
    this.throttle = new LoginThrottle({
      maxFailures: opts.maxFailures,
      baseBackoffMs: opts.baseBackoffMs ?? 1000,
      maxBackoffMs: opts.maxBackoffMs ?? 300_000,
    });
  }

  /**
   * `authenticate` for the request, unless its address is refused on `surface` now (429); a
   * 401 it throws for credentials the request carried counts against the address, a success
   * takes SUCCESS_WEIGHT of a failure off. `vouched`: the request carries credentials that this
   * process has seen name a caller (an OCPI token; not the API key, which is guessed), checked
   * even while the address is refused: a partner behind the address of one that keeps failing
   * (a hub, a NAT, the other's old token after a rotation) is not held back with it.
   */
  async guard<A>(
    ctx: Context,
    surface: string,
    authenticate: () => Promise<A> | A,
    vouched?: () => boolean,
  ): Promise<A> {
    // nothing on record (the usual case): no address to read, no key to build
    const watched = this.throttle.size > 0;
    const key = watched ? this.keyOf(ctx, surface) : undefined;
    if (key !== undefined) {
      const waitMs = this.throttle.retryAfterMs([key]);
      if (waitMs > 0 && !vouched?.()) throw tooMany(waitMs);
    }
    let auth: A;
    try {
      auth = await authenticate();
    } catch (err) {
      if (unauthorized(err) && ctx.get('Authorization') !== '') this.failed(key ?? this.keyOf(ctx, surface));
      throw err;
    }
    if (key !== undefined) this.throttle.forgive(key, SUCCESS_WEIGHT);
    return auth;
  }

  private keyOf(ctx: Context, surface: string): string {
    return `${surface}:${throttledAddress(clientAddress(ctx.req, this.opts.trustProxy), ctx.req.socket.remoteAddress)}`;
  }

  private failed(key: string): void {
    for (const block of this.throttle.failed([key])) {
      const [surface = '', ...address] = block.key.split(':');
      this.opts.log.warn(
        { surface, address: address.join(':'), failures: block.failures, backoff_ms: block.backoffMs },
        'authentication failures: address refused for a while',
      );
    }
  }
}

/**
 * `authenticate` through the request's back-off (the router keeps it in `ctx.state`), for a route
 * that checks credentials itself: one whose token is optional, `/metrics`. Without one (turned
 * off), `authenticate` alone.
 */
export async function guardedAuth<A>(ctx: Context, surface: string, authenticate: () => Promise<A> | A): Promise<A> {
  const guard = ctx.state.authFailures;
  return guard ? guard.guard(ctx, surface, authenticate) : authenticate();
}

function unauthorized(err: unknown): boolean {
  return (err instanceof HttpError && err.status === 401) || (err instanceof OcpiError && err.httpStatus === 401);
}

function tooMany(waitMs: number): HttpError {
  const seconds = Math.ceil(waitMs / 1000);
  return new HttpError(
    429,
    'too_many_failures',
    `too many failed authentications from this address: try again in ${seconds} s`,
    undefined,
    { 'Retry-After': String(seconds) },
  );
}
