import { OcppSocket } from '../load-test/ocpp-socket.js';
import type { ChargerSpec } from '../load-test/protocol.js';

/**
 * The charger process of the pricing benchmark (scripts/bench-pricing.ts): OCPP 1.6 chargers on
 * plain `ws` that connect, boot, report status and then each send one message every interval,
 * on a fixed schedule whether or not the last one was answered (open loop, as real chargers do):
 * MeterValues of an open transaction for a share of them, Heartbeat for the others. It keeps the
 * send time (wall clock) and latency of every call, so that the coordinator can ask for the
 * latencies of the calls sent within a window of its own. Runs in its own process so that
 * generating the load does not share the event loop being measured.
 */

export interface StartOrder {
  type: 'start';
  chargers: ChargerSpec[];
  intervalMs: number;
  /** share of chargers that open a transaction and send MeterValues instead of Heartbeat */
  meterShare: number;
  maxConnecting: number;
}

/** The calls sent in [from, to) (Date.now() of either process: the same clock). */
export interface SamplesOrder {
  type: 'samples';
  from: number;
  to: number;
}

export type ToChargers = StartOrder | SamplesOrder;

export interface ReadyReport {
  type: 'ready';
  ready: number;
  errors: number;
  lastError: string | undefined;
}

export interface SamplesReport {
  type: 'samples';
  /** ms, of the calls sent within the window and answered */
  latencies: number[];
  /** calls sent within the window and not answered (yet) */
  unanswered: number;
  /** calls sent within the window answered with a CALLERROR or lost with the connection */
  errors: number;
  lastError: string | undefined;
}

export type FromChargers = ReadyReport | SamplesReport;

/** Every steady-state call: when it was sent, and its latency (NaN: failed). */
const sentAt: number[] = [];
const latency: number[] = [];
/** a steady-state call: sent at (wall clock, ms) and its start on this process's monotonic clock */
interface Steady {
  sentAt: number;
  t0: number;
}
const outstanding = new Set<Steady>();
let lastError: string | undefined;

class Charger {
  private readonly socket: OcppSocket;
  private meter = 0;
  private transactionId = 0;

  constructor(private readonly spec: ChargerSpec) {
    this.socket = new OcppSocket(spec);
  }

  async connect(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.socket.open(30_000);
        return;
      } catch (err) {
        if (attempt >= 5) throw err;
        await new Promise((r) => setTimeout(r, 300 * attempt));
      }
    }
  }

  call(action: string, payload: unknown): Promise<Record<string, unknown>> {
    return this.socket.call(action, payload);
  }

  async boot(metering: boolean): Promise<void> {
    await this.call('BootNotification', { chargePointVendor: 'Bench', chargePointModel: 'Pricing-16' });
    await this.status('Available');
    if (!metering) return;
    const idTag = `BP-${this.spec.id}`.slice(-20);
    await this.call('Authorize', { idTag });
    const started = await this.call('StartTransaction', {
      connectorId: 1,
      idTag,
      meterStart: this.meter,
      timestamp: new Date().toISOString(),
    });
    this.transactionId = Number(started.transactionId);
    await this.status('Charging');
  }

  private status(status: string): Promise<Record<string, unknown>> {
    const timestamp = new Date().toISOString();
    return this.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status, timestamp });
  }

  /** One steady-state call, recorded. */
  tick(metering: boolean): void {
    this.meter += 25;
    const payload = metering
      ? {
          connectorId: 1,
          transactionId: this.transactionId,
          meterValue: [
            {
              timestamp: new Date().toISOString(),
              sampledValue: [{ value: String(this.meter), measurand: 'Energy.Active.Import.Register', unit: 'Wh' }],
            },
          ],
        }
      : {};
    const call: Steady = { sentAt: Date.now(), t0: performance.now() };
    outstanding.add(call);
    const settle = (ms: number): void => {
      outstanding.delete(call);
      sentAt.push(call.sentAt);
      latency.push(ms);
    };
    this.call(metering ? 'MeterValues' : 'Heartbeat', payload).then(
      () => settle(performance.now() - call.t0),
      (err: Error) => {
        lastError = err.message;
        settle(NaN);
      },
    );
  }
}

const chargers: Charger[] = [];

/** Connects and boots every charger, `maxConnecting` at a time; then starts the schedule. */
async function start(order: StartOrder): Promise<void> {
  let errors = 0;
  let next = 0;
  // spread over the schedule: MeterValues and Heartbeat interleaved
  const metering = (i: number): boolean => Math.floor((i + 1) * order.meterShare) > Math.floor(i * order.meterShare);
  const worker = async (): Promise<void> => {
    for (let i = next++; i < order.chargers.length; i = next++) {
      const spec = order.chargers[i];
      if (!spec) continue;
      const c = new Charger(spec);
      try {
        await c.connect();
        await c.boot(metering(i));
        chargers[i] = c;
      } catch (err) {
        errors++;
        lastError = `${spec.id}: ${(err as Error).message}`;
      }
    }
  };
  await Promise.all(Array.from({ length: order.maxConnecting }, worker));
  chargers.forEach((c, i) => {
    // each charger on its own phase of the interval: a steady rate, not waves
    setTimeout(
      () => {
        c.tick(metering(i));
        setInterval(() => c.tick(metering(i)), order.intervalMs);
      },
      (order.intervalMs * i) / order.chargers.length,
    );
  });
  const report: ReadyReport = { type: 'ready', ready: chargers.filter(Boolean).length, errors, lastError };
  process.send?.(report);
}

function samples(order: SamplesOrder): SamplesReport {
  const report: SamplesReport = { type: 'samples', latencies: [], unanswered: 0, errors: 0, lastError };
  for (let i = 0; i < sentAt.length; i++) {
    const at = sentAt[i] ?? 0;
    if (at < order.from || at >= order.to) continue;
    const ms = latency[i] ?? NaN;
    if (Number.isNaN(ms)) report.errors++;
    else report.latencies.push(ms);
  }
  for (const p of outstanding) if (p.sentAt >= order.from && p.sentAt < order.to) report.unanswered++;
  return report;
}

process.on('message', (m: ToChargers) => {
  if (m.type === 'start') void start(m);
  if (m.type === 'samples') process.send?.(samples(m));
});
process.on('disconnect', () => process.exit(0));
