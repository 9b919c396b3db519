import { operatorAuthenticator, type OperatorAuth } from '../gateway/csms-auth.js';
import { RequestValidationError } from '../gateway/errors.js';
import { defineMount, route, type MountSpec } from '../gateway/route-table.js';
import type { Config } from '../../config/index.js';
import type { PlatformModule, PlatformServices } from '../platform/services.js';
import type { OnBatch, PricingPool, PricingTask } from './pool.js';
import { PricedCdr, PriceRequest, type PriceOutcome } from './types.js';
import { isTimeZone } from './local-time.js';

/**
 * Tariff pricing as a platform feature (docs/TARIFFS.md): the process's pricing threads, which
 * start on first use (a process that never prices starts none, nor loads Piscina), and the
 * operator's `POST /v1/tariffs/price`.
 */

/** What other modules use to price: CDR building (src/roaming) and the eMSP's re-pricing. */
export interface PricingHandle {
  /**
   * Every outcome, in order. An outcome priced without its breakdown carries empty breakdown
   * lists that are shared and frozen: read them, do not add to them.
   */
  price(tasks: readonly PricingTask[]): Promise<PriceOutcome[]>;
  /** bulk pricing: each batch's outcomes handed over in order as they come back (PricingPool.each) */
  each(tasks: readonly PricingTask[], onBatch: OnBatch): Promise<void>;
  priceOne(task: PricingTask): Promise<PriceOutcome>;
}

export type PricingModule = PlatformModule & { pricing: PricingHandle };

const CLOSED = 'the pricing threads are closed: the process is stopping';

/**
 * The pool of a process, made from its settings when first asked for. Its module (and Piscina
 * with it) is loaded then too: ~17 ms of a start that a process which never prices does without
 * (docs/PERFORMANCE.md, "Fourteenth sitting").
 */
class LazyPool implements PricingHandle {
  private pool: PricingPool | undefined;
  private making: Promise<PricingPool> | undefined;
  private config: Config | undefined;
  private served: (() => number) | undefined;
  private closed = false;

  configure(config: Config): void {
    this.config ??= config;
  }

  /** what tells bulk jobs that the process is serving (PlatformMetrics.handled) */
  observe(served: () => number): void {
    this.served ??= served;
  }

  private get(): Promise<PricingPool> {
    if (this.pool) return Promise.resolve(this.pool);
    if (this.closed) return Promise.reject(new Error(CLOSED));
    const config = this.config;
    if (!config) return Promise.reject(new Error('the pricing module was not started'));
    // concurrent first callers share one pool; a failed load is tried again by the next caller
    this.making ??= this.make(config).finally(() => {
      this.making = undefined;
    });
    return this.making;
  }

  private async make(config: Config): Promise<PricingPool> {
    const { PricingPool } = await import('./pool.js');
    if (this.closed) throw new Error(CLOSED);
    this.pool = new PricingPool({
      threads: config.PRICING_THREADS,
      idleTimeoutMs: config.PRICING_IDLE_TIMEOUT_MS,
      maxQueue: config.PRICING_MAX_QUEUE,
      threadPolicy: config.PRICING_THREAD_POLICY,
      bulkShare: config.PRICING_BULK_SHARE_PERCENT / 100,
      served: this.served,
    });
    return this.pool;
  }

  async price(tasks: readonly PricingTask[]): Promise<PriceOutcome[]> {
    return (await this.get()).price(tasks);
  }

  async each(tasks: readonly PricingTask[], onBatch: OnBatch): Promise<void> {
    return (await this.get()).each(tasks, onBatch);
  }

  async priceOne(task: PricingTask): Promise<PriceOutcome> {
    return (await this.get()).priceOne(task);
  }

  /** the pool's queue, zero while no thread was ever needed */
  queue(): { in_flight: number; waiting: number } {
    const stats = this.pool?.stats();
    return { in_flight: stats?.in_flight ?? 0, waiting: stats?.waiting ?? 0 };
  }

  async close(): Promise<void> {
    this.closed = true;
    const pool = this.pool;
    this.pool = undefined;
    await pool?.close();
  }
}

function priceRoutes(services: PlatformServices, pricing: PricingHandle): MountSpec<OperatorAuth> {
  return defineMount<OperatorAuth>({
    name: 'tariffs',
    prefix: '/v1',
    description: 'Tariff pricing (operators)',
    security: 'bearer',
    authenticate: operatorAuthenticator(services.config),
    routes: [
      route({
        method: 'POST',
        path: '/tariffs/price',
        summary: 'Prices a CDR with a 2.2.1 tariff in a time zone: every CDR total and how each was reached',
        body: PriceRequest,
        response: PricedCdr,
        responses: { 422: 'a tariff or CDR the schema takes but that cannot be priced (the reason in detail)' },
        handler: async (req) => {
          const { tariff, cdr, time_zone } = req.body;
          // named at its own field, not at the CDR the engine reads it with
          if (!isTimeZone(time_zone))
            throw new RequestValidationError([
              {
                loc: ['body', 'time_zone'],
                msg: `time_zone ${time_zone} is not an IANA time zone`,
                type: 'invalid_time_zone',
                input: time_zone,
                ctx: {},
              },
            ]);
          const outcome = await pricing.priceOne({ tariff, cdr, time_zone, breakdown: true });
          if (outcome.ok) return { data: outcome.priced };
          const loc = outcome.code === 'invalid_tariff' ? ['body', 'tariff'] : ['body', 'cdr'];
          throw new RequestValidationError([{ loc, msg: outcome.message, type: outcome.code, input: null, ctx: {} }]);
        },
      }),
    ],
  });
}

export function pricingModule(): PricingModule {
  const pool = new LazyPool();
  return {
    name: 'tariffs',
    pricing: pool,
    actors: ({ config }) => {
      pool.configure(config);
      return [];
    },
    observe(services) {
      const { metrics } = services;
      metrics.sources.pricingQueue = () => pool.queue();
      pool.observe(() => metrics.handled);
    },
    mounts(services) {
      pool.configure(services.config);
      return [priceRoutes(services, pool)];
    },
    // after the actors: their last turns may still price (a session ending as the process stops)
    close: () => pool.close(),
  };
}
