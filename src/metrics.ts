import type * as PromClient from 'prom-client';
import type { MetricObjectWithValues, MetricType, MetricValueWithName, Registry } from 'prom-client';

/** prom-client, loaded by the first scrape: a process that is never scraped does not load it. */
type Prom = typeof PromClient;

/** One partner's outbox as the gauges show it (docs/OPERATIONS.md "Signals"). */
export interface OutboxDepth {
  partner: string;
  pending: number;
  /** created_at of the oldest pending row (epoch ms), null without one */
  oldest_pending_at: number | null;
  dead: number;
}

/**
 * What the modules of a process report when /metrics is read: each is set by the module that
 * owns the thing (csms: its connections; ocpi: the outbox table; tariffs: the pricing threads)
 * and read only at scrape time, never on a message's path.
 */
export interface MetricSources {
  connectedChargers?(): Readonly<Record<'ocpp1.6' | 'ocpp2.0.1', number>>;
  /** bounded (a few hundred partners at most) and may fail: a failure leaves the gauges empty */
  outbox?(): Promise<readonly OutboxDepth[]>;
  pricingQueue?(): { in_flight: number; waiting: number };
}

/**
 * Prometheus metrics of one process, served at /metrics. What runs per message or request adds to
 * plain numbers here (`TallyCounter`, `TallyHistogram`); prom-client, its registry, its default
 * process metrics and the gauges read from `sources` are made by the first scrape
 * (`exposition`): about a twentieth of a start went to loading it (docs/PERFORMANCE.md, hot
 * path, "Twenty-sixth sitting"). Node's default metrics (memory, event loop, GC) are then read
 * from the first scrape on; the GC histograms count the collections after it. CPU seconds count
 * from the process's start (`processCpuSinceStart`).
 */
export class PlatformMetrics {
  readonly sources: MetricSources = {};
  /**
   * Grows by one with every actor turn, HTTP request and OCPP call answered here: not exported,
   * read by bulk pricing to tell whether the process is serving (src/tariffs/bulk-pace.ts).
   */
  handled = 0;
  /**
   * OCPP calls by direction (`in`: charger to CSMS, `out`: CSMS to charger), action and outcome.
   * Counted through slots (`slot`) bound once per label set: a charger's message adds one to a
   * plain number, nothing is hashed or allocated.
   */
  readonly ocppMessages = new TallyCounter({
    name: 'ocpp_messages_total',
    help: 'OCPP calls by direction (in: from chargers, out: to chargers), action and outcome',
    labelNames: ['direction', 'action', 'outcome'] as const,
  });
  /**
   * `cause` tells a bug here from an outage: `internal` (an InternalError we sent for a failure of
   * our own), `dependency` (an InternalError we sent because PostgreSQL or Redis was unreachable)
   * or `charger` (every other: what the charger sent, or a CALLERROR it sent us).
   */
  readonly ocppCallErrors = new TallyCounter({
    name: 'ocpp_callerrors_total',
    help: 'CALLERRORs by direction (sent to chargers, received from them), error code and cause (charger, dependency: PostgreSQL or Redis unreachable, internal: a failure here)',
    labelNames: ['direction', 'code', 'cause'] as const,
  });
  readonly ocppCallSeconds = new TallyHistogram({
    name: 'ocpp_call_duration_seconds',
    help: 'time from a CSMS-to-charger CALL to its CALLRESULT or CALLERROR, by action',
    labelNames: ['action'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  });
  readonly httpRequests = new TallyHistogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  });
  readonly actorTurns = new TallyCounter({
    name: 'actor_turns_total',
    help: 'actor turns by kind and outcome',
    labelNames: ['kind', 'outcome'] as const,
  });
  readonly actorTurnSeconds = new TallyHistogram({
    name: 'actor_turn_duration_seconds',
    help: 'time of an actor turn including its commit',
    labelNames: ['kind'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
  });

  private built: Promise<Registry> | undefined;

  constructor(private readonly collect: { activations(): number; ownedShards(): number }) {}

  /**
   * One finished actor turn. It runs for every message a charger sends, so it only adds to plain
   * numbers: prom-client's own `inc` and `observe` hash their labels on every call.
   */
  observeTurn(kind: string, outcome: string, seconds: number): void {
    this.handled++;
    this.actorTurns.add([kind, outcome]);
    this.actorTurnSeconds.tally([kind], seconds);
  }

  /** One answered HTTP request (every OCPI and /v1 call). */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.handled++;
    this.httpRequests.tally([method, route, String(status)], seconds);
  }

  /** The text /metrics answers, and its content type. */
  async exposition(): Promise<{ body: string; contentType: string }> {
    const registry = await this.registry();
    return { body: await registry.metrics(), contentType: registry.contentType };
  }

  /** prom-client's registry of this process, made (and prom-client loaded) on first use. */
  registry(): Promise<Registry> {
    this.built ??= import('prom-client').then((prom) => this.build(prom));
    return this.built;
  }

  private build(prom: Prom): Registry {
    const registry = new prom.Registry();
    prom.collectDefaultMetrics({ register: registry });
    processCpuSinceStart(prom, registry);
    for (const t of [this.ocppMessages, this.ocppCallErrors, this.actorTurns]) t.register(prom, registry);
    for (const t of [this.ocppCallSeconds, this.httpRequests, this.actorTurnSeconds]) t.register(prom, registry);
    this.sourceGauges(prom, registry);
    const { activations, ownedShards } = this.collect;
    new prom.Gauge({
      name: 'actor_activations',
      help: 'live actor activations in this process',
      registers: [registry],
      collect() {
        this.set(activations());
      },
    });
    new prom.Gauge({
      name: 'actor_shards_owned',
      help: 'shards whose lease this process holds',
      registers: [registry],
      collect() {
        this.set(ownedShards());
      },
    });
    return registry;
  }

  /** the outbox's rows read once per scrape, whichever of its gauges asks first */
  private outboxRead: { at: number; rows: Promise<readonly OutboxDepth[]> } | undefined;

  private outboxDepths(): Promise<readonly OutboxDepth[]> {
    const read = this.sources.outbox;
    if (!read) return Promise.resolve([]);
    const now = Date.now();
    if (!this.outboxRead || now - this.outboxRead.at > 1000)
      this.outboxRead = { at: now, rows: read().catch((): OutboxDepth[] => []) };
    return this.outboxRead.rows;
  }

  /** gauges whose values the modules' sources give when /metrics is read */
  private sourceGauges(prom: Prom, registry: Registry): void {
    const sources = this.sources;
    const depths = (): Promise<readonly OutboxDepth[]> => this.outboxDepths();
    new prom.Gauge({
      name: 'ocpp_connected_chargers',
      help: 'chargers whose WebSocket this process holds, by OCPP version',
      labelNames: ['protocol'] as const,
      registers: [registry],
      collect() {
        const n = sources.connectedChargers?.() ?? { 'ocpp1.6': 0, 'ocpp2.0.1': 0 };
        this.set({ protocol: 'ocpp1.6' }, n['ocpp1.6']);
        this.set({ protocol: 'ocpp2.0.1' }, n['ocpp2.0.1']);
      },
    });
    const perPartner = (name: string, help: string, value: (d: OutboxDepth, now: number) => number | undefined) =>
      new prom.Gauge({
        name,
        help,
        labelNames: ['partner'] as const,
        registers: [registry],
        async collect() {
          const rows = await depths();
          const now = Date.now();
          // a partner whose rows are all gone must not keep its last value
          this.reset();
          for (const d of rows) {
            const v = value(d, now);
            if (v !== undefined) this.set({ partner: d.partner }, v);
          }
        },
      });
    perPartner(
      'ocpi_outbox_pending',
      'outbox rows waiting to be sent, per partner (the whole table)',
      (d) => d.pending,
    );
    perPartner(
      'ocpi_outbox_oldest_pending_age_seconds',
      'age of the oldest row waiting to be sent, per partner',
      (d, now) => (d.oldest_pending_at === null ? 0 : Math.max(0, (now - d.oldest_pending_at) / 1000)),
    );
    perPartner('ocpi_outbox_dead_letters', 'dead letters waiting for the operator, per partner', (d) => d.dead);
    new prom.Gauge({
      name: 'pricing_queue_depth',
      help: 'pricing batches handed to the threads and not answered (in_flight), and callers waiting for room (waiting)',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const q = sources.pricingQueue?.() ?? { in_flight: 0, waiting: 0 };
        this.set({ state: 'in_flight' }, q.in_flight);
        this.set({ state: 'waiting' }, q.waiting);
      },
    });
  }
}

const CPU_COUNTERS = {
  process_cpu_user_seconds_total: 'Total user CPU time spent in seconds.',
  process_cpu_system_seconds_total: 'Total system CPU time spent in seconds.',
  process_cpu_seconds_total: 'Total user and system CPU time spent in seconds.',
} as const;

/**
 * prom-client's CPU counters count from when they are made, which here is the first scrape: a
 * tester read 0.057 s while /proc said 1.93 s. These take their place and read
 * `process.cpuUsage()` without a baseline, which counts from the process's start; one reading
 * sets all three, as prom-client's do.
 */
function processCpuSinceStart(prom: Prom, registry: Registry): void {
  for (const name of Object.keys(CPU_COUNTERS)) registry.removeSingleMetric(name);
  const counter = (name: keyof typeof CPU_COUNTERS, collect?: () => void): PromClient.Counter =>
    new prom.Counter({ name, help: CPU_COUNTERS[name], registers: [registry], ...(collect ? { collect } : {}) });
  const set = (c: PromClient.Counter, micros: number): void => {
    c.reset();
    c.inc(micros / 1e6);
  };
  // registered first, so read first at a scrape: it sets the other two from the same reading
  const user = counter('process_cpu_user_seconds_total', () => {
    const usage = process.cpuUsage();
    set(user, usage.user);
    set(system, usage.system);
    set(total, usage.user + usage.system);
  });
  const system = counter('process_cpu_system_seconds_total');
  const total = counter('process_cpu_seconds_total');
}

interface Tally {
  labels: Record<string, string>;
  /** per bucket, not cumulative; the last one is +Inf */
  buckets: number[];
  sum: number;
  count: number;
}

type TallyValues = MetricObjectWithValues<MetricValueWithName<string>>;

/** prom-client's types declare `MetricType` a numeric enum; its registry reads the type's name */
const HISTOGRAM = 'histogram' as unknown as MetricType;

/**
 * A histogram that counts into plain arrays per label set and formats them only when read (for
 * observations on every message or request: prom-client's own `observe` hashes the label set on
 * each call). Registered, it reads like any prom-client histogram (`getForPromString`, `get`).
 */
class TallyHistogram<L extends string> {
  private readonly metric: { name: string; help: string; labelNames: readonly L[] };
  private readonly bounds: readonly number[];
  private tallies = new Map<string, Tally>();

  constructor(config: { name: string; help: string; labelNames: readonly L[]; buckets: number[] }) {
    this.metric = { name: config.name, help: config.help, labelNames: config.labelNames };
    this.bounds = config.buckets;
  }

  /** `values` in the order of `labelNames`; a duration that is not a finite number is dropped */
  tally(values: readonly string[], seconds: number): void {
    if (!Number.isFinite(seconds)) return;
    const key = values.length === 1 ? (values[0] ?? '') : values.join('\u0000');
    let t = this.tallies.get(key);
    if (!t) {
      const labels: Record<string, string> = {};
      this.metric.labelNames.forEach((name, i) => (labels[name] = values[i] ?? ''));
      t = { labels, buckets: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
      this.tallies.set(key, t);
    }
    let i = 0;
    while (i < this.bounds.length && seconds > (this.bounds[i] ?? Infinity)) i++;
    t.buckets[i] = (t.buckets[i] ?? 0) + 1;
    t.sum += seconds;
    t.count++;
  }

  /** A prom-client histogram in `registry` that reads these tallies, and whose reset clears them. */
  register(prom: Prom, registry: Registry): void {
    const tallies = (): TallyValues => this.values();
    // prom-client's constructor resets the metric it makes: what was tallied before the first
    // scrape is kept through that one
    let made = false;
    const clear = (): void => {
      if (made) this.tallies = new Map();
    };
    class Read extends prom.Histogram<L> {
      override get(): Promise<TallyValues> {
        return Promise.resolve(tallies());
      }

      /** what the registry reads when it writes the text format */
      getForPromString(): Promise<TallyValues> {
        return Promise.resolve(tallies());
      }

      override reset(): void {
        clear();
      }
    }
    new Read({
      ...this.metric,
      labelNames: [...this.metric.labelNames],
      buckets: [...this.bounds],
      registers: [registry],
    });
    made = true;
  }

  private values(): TallyValues {
    const { name, help } = this.metric;
    const values: MetricValueWithName<string>[] = [];
    for (const t of this.tallies.values()) {
      let acc = 0;
      this.bounds.forEach((le, i) => {
        acc += t.buckets[i] ?? 0;
        values.push({ metricName: `${name}_bucket`, labels: { le, ...t.labels }, value: acc });
      });
      values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', ...t.labels }, value: t.count });
      values.push({ metricName: `${name}_sum`, labels: t.labels, value: t.sum });
      values.push({ metricName: `${name}_count`, labels: t.labels, value: t.count });
    }
    return { name, help, type: HISTOGRAM, values, aggregator: 'sum', collect: () => undefined };
  }
}

/** A label set's count of a `TallyCounter`, handed to prom-client when the registry reads it. */
export interface CounterSlot {
  n: number;
}

/**
 * A counter whose increments go to plain numbers per label set and, once registered, are handed
 * to prom-client's own count when the registry reads it (`collect`); its `reset` zeroes what was
 * not handed over yet.
 */
class TallyCounter<L extends string> {
  /** per label set: `n` not handed to prom-client yet, `handed` what was */
  private readonly pending = new Map<string, { labels: Partial<Record<L, string>>; n: number; handed: number }>();

  constructor(private readonly metric: { name: string; help: string; labelNames: readonly L[] }) {}

  /** one more, `values` in the order of `labelNames` */
  add(values: readonly string[]): void {
    this.slot(values).n++;
  }

  /**
   * The count of one label set, to keep and add to (`slot.n++`): for a path that runs per
   * message, where even joining the label values would allocate.
   */
  slot(values: readonly string[]): CounterSlot {
    const key = values.join('\u0000');
    let entry = this.pending.get(key);
    if (!entry) {
      const labels: Partial<Record<L, string>> = {};
      this.metric.labelNames.forEach((name, i) => (labels[name] = values[i] ?? ''));
      this.pending.set(key, (entry = { labels, n: 0, handed: 0 }));
    }
    return entry;
  }

  /** The count so far of the label sets that have every label of `match`, whether scraped or not. */
  count(match: Partial<Record<L, string>> = {}): number {
    let total = 0;
    const wanted = Object.entries(match) as [L, string][];
    for (const e of this.pending.values()) if (wanted.every(([k, v]) => e.labels[k] === v)) total += e.handed + e.n;
    return total;
  }

  /** A prom-client counter in `registry`, given what was counted each time the registry reads it. */
  register(prom: Prom, registry: Registry): void {
    const pending = this.pending;
    // prom-client's constructor resets the metric it makes: what was counted before the first
    // scrape is kept through that one
    let made = false;
    class Handed extends prom.Counter<L> {
      override reset(): void {
        super.reset();
        // zeroed, not dropped: callers keep their slots
        if (made) for (const entry of pending.values()) entry.n = entry.handed = 0;
      }
    }
    new Handed({
      ...this.metric,
      labelNames: [...this.metric.labelNames],
      registers: [registry],
      collect() {
        for (const entry of pending.values()) {
          if (entry.n === 0) continue;
          this.inc(entry.labels, entry.n);
          entry.handed += entry.n;
          entry.n = 0;
        }
      },
    });
    made = true;
  }
}
