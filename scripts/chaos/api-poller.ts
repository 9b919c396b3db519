/** One request the poller sends; `needs` names the actor it asks on the way, if any. */
export interface PollRequest {
  route: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  needs?: string;
}

export interface PollRecord {
  route: string;
  needs: string | undefined;
  target: string;
  startedAt: number;
  ms: number;
  /** the HTTP status, 'timeout' past the bound, 'error' when the connection failed */
  outcome: number | 'timeout' | 'error';
  /** a 5xx answer's `error.code` (charge_point_unreachable, dependency_unavailable, ...) */
  code?: string;
}

/**
 * A background client of /v1 and OCPI, as operators and partners would be during an incident:
 * one request every `everyMs` to a random target the load balancer offers, each bounded by
 * `boundMs` (a call past it counts as a hang). Records every outcome.
 */
export class ApiPoller {
  readonly records: PollRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private turn = 0;

  constructor(
    private readonly opts: {
      targets(): string[];
      requests(): PollRequest[];
      boundMs: number;
      everyMs: number;
      random(): number;
    },
  ) {}

  start(): void {
    this.timer = setInterval(() => this.tick(), this.opts.everyMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await Promise.all([...this.inFlight]);
  }

  /** Sends these at once, each to a random target (asks aimed at a victim right after a fault). */
  burst(requests: PollRequest[]): void {
    for (const r of requests) this.fire(r);
  }

  private tick(): void {
    const requests = this.opts.requests();
    const request = requests[this.turn++ % Math.max(1, requests.length)];
    if (request) this.fire(request);
  }

  private fire(request: PollRequest): void {
    const targets = this.opts.targets();
    const target = targets[Math.floor(this.opts.random() * targets.length)];
    if (target === undefined) return;
    const p = this.send(target, request);
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async send(target: string, r: PollRequest): Promise<void> {
    const startedAt = Date.now();
    let outcome: PollRecord['outcome'];
    let code: string | undefined;
    try {
      const res = await fetch(`${target}${r.path}`, {
        method: r.method,
        headers: { ...r.headers, ...(r.body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(r.body === undefined ? {} : { body: JSON.stringify(r.body) }),
        signal: AbortSignal.timeout(this.opts.boundMs),
      });
      // the body too must arrive within the bound
      const body = await res.text();
      outcome = res.status;
      if (res.status >= 500) code = errorCode(body);
    } catch (err) {
      outcome = err instanceof DOMException && err.name === 'TimeoutError' ? 'timeout' : 'error';
    }
    const ms = Date.now() - startedAt;
    this.records.push({ route: r.route, needs: r.needs, target, startedAt, ms, outcome, ...(code ? { code } : {}) });
  }
}

/** The `error.code` of a /v1 error body, if it has one. */
function errorCode(body: string): string | undefined {
  try {
    const code = (JSON.parse(body) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}
