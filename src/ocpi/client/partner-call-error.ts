/**
 * Why a call to a partner failed, as a short category that is safe to hand to whoever asked for
 * the call (a partner with Token A, an operator). Nothing the remote side said or how it failed
 * at the network level goes into the message: a caller choosing the URL must not learn what
 * answered there (docs/SECURITY.md; before, the handshake was a port scanner with a readable output).
 */
export type PartnerFailure =
  /** not http(s), a host name that does not resolve, or an address PARTNER_URL_POLICY refuses */
  | 'destination refused'
  /** a header of ours cannot be sent (the partner's token, sent raw to 2.1.1, is not valid in HTTP) */
  | 'invalid request'
  /** the connection could not be made or broke (refused, reset, TLS) */
  | 'no connection'
  /** no complete reply within PARTNER_TIMEOUT_MS */
  | 'timeout'
  /** a 3xx: we never follow redirects (they would bypass the destination check) */
  | 'redirect refused'
  /** the reply passed PARTNER_RESPONSE_LIMIT */
  | 'reply too large'
  /** JSON nested deeper than REPLY_MAX_DEPTH (64) */
  | 'reply too deep'
  | 'not an OCPI envelope'
  /** an HTTP status other than 2xx, or an OCPI status_code other than 1xxx */
  | 'error answer'
  /** an envelope whose data is not what the call expects */
  | 'unexpected data'
  | 'no common version'
  /** the partner's version details list no endpoint at all, or no credentials endpoint (3003) */
  | 'no endpoints';

export class PartnerCallError extends Error {
  override readonly name = 'PartnerCallError';
  /** the partner's HTTP status, when it answered (405 moves a rotation to the next version) */
  readonly httpStatus: number | undefined;
  /** for our logs only, never for the caller: what exactly went wrong, and where */
  readonly detail: string | undefined;
  /**
   * the OCPI status_code of an error answer in a valid envelope (2003 for a command naming a
   * location the CPO does not have): told to our operator, whose call went to a registered
   * partner's endpoint, never to a partner whose URL we were handed (`operatorMessage`)
   */
  readonly partnerStatusCode: number | undefined;

  constructor(
    /** 3001 unable to use the client's API, 3002 unsupported version, 3003 no matching endpoints */
    readonly code: 3001 | 3002 | 3003,
    readonly reason: PartnerFailure,
    opts: { message?: string; httpStatus?: number; detail?: string; partnerStatusCode?: number } = {},
  ) {
    super(opts.message ?? `partner unreachable: ${reason}`);
    this.httpStatus = opts.httpStatus;
    this.detail = opts.detail === undefined ? undefined : withoutCredentials(opts.detail);
    this.partnerStatusCode = opts.partnerStatusCode;
  }

  /**
   * What our operator is told: a partner that answered with an OCPI error says so, with the
   * HTTP status and status_code it sent ("partner unreachable" read as an outage when the CPO
   * had refused a command naming an unknown location); any other failure, its category.
   */
  operatorMessage(): string {
    if (this.reason !== 'error answer' || this.partnerStatusCode === undefined) return this.message;
    return `the partner answered with an error: HTTP ${this.httpStatus ?? 200}, OCPI status_code ${this.partnerStatusCode}`;
  }

  /** What our log gets: the category and the detail. */
  toLog(): { reason: PartnerFailure; code: number; httpStatus?: number; detail?: string } {
    return {
      reason: this.reason,
      code: this.code,
      ...(this.httpStatus === undefined ? {} : { httpStatus: this.httpStatus }),
      ...(this.detail === undefined ? {} : { detail: this.detail }),
    };
  }
}

/**
 * `text` with the user and password of every URL in it masked (`http://***@host/...`): a partner's
 * versions URL may carry them, and the detail goes to our log.
 */
export function withoutCredentials(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi, '$1***@');
}
