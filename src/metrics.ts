import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of one process, served at /metrics. */
export class PlatformMetrics {
  readonly registry = new Registry();
  readonly httpRequests = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly actorTurns = new Counter({
    name: 'actor_turns_total',
    help: 'actor turns by kind and outcome',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly actorTurnSeconds = new Histogram({
    name: 'actor_turn_duration_seconds',
    help: 'time of an actor turn including its commit',
    labelNames: ['kind'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [this.registry],
  });

  /** the labelled series of each kind and outcome, looked up once instead of on every turn */
  private readonly turnSeries = new Map<string, { count: Counter.Internal; seconds: Histogram.Internal<'kind'> }>();

  /** One finished actor turn: runs for every message a charger sends, hence the cached series. */
  observeTurn(kind: string, outcome: string, seconds: number): void {
    const key = `${kind}\u0000${outcome}`;
    let series = this.turnSeries.get(key);
    if (!series) {
      series = { count: this.actorTurns.labels({ kind, outcome }), seconds: this.actorTurnSeconds.labels({ kind }) };
      this.turnSeries.set(key, series);
    }
    series.count.inc();
    series.seconds.observe(seconds);
  }

  constructor(collect: { activations(): number; ownedShards(): number }) {
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: 'actor_activations',
      help: 'live actor activations in this process',
      registers: [this.registry],
      collect() {
        this.set(collect.activations());
      },
    });
    new Gauge({
      name: 'actor_shards_owned',
      help: 'shards whose lease this process holds',
      registers: [this.registry],
      collect() {
        this.set(collect.ownedShards());
      },
    });
  }
}
