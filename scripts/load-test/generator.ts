import type WebSocket from 'ws';
import { OcppSocket } from './ocpp-socket.js';
import type { ChargerSpec, FloodOrder, FloodReport, GeneratorPlan, GeneratorReport, ToGenerator } from './protocol.js';
import { emptyHistogram, record } from './stats.js';

/**
 * A generator process of the load test: simulated chargers speaking OCPP-J on plain `ws`
 * (deliberately not the server's code), reporting counts and latencies to the coordinator.
 */
const state: Omit<GeneratorReport, 'type'> = {
  connected: 0,
  booted: 0,
  ready: 0,
  messages: 0,
  errors: 0,
  disconnects: 0,
  transactions: 0,
  refused: 0,
  retries: 0,
  histogram: emptyHistogram(),
  lastError: undefined,
  lastRetryReason: undefined,
  readyAfterMs: undefined,
};
const sockets = new Set<WebSocket>();
const timers = new Set<NodeJS.Timeout>();
let stopping = false;

/** Counts a start whose token the CSMS did not accept (`info`: its idTagInfo or idTokenInfo). */
function countRefused(info: unknown): void {
  const status = typeof info === 'object' && info !== null ? (info as { status?: unknown }).status : undefined;
  if (status !== 'Accepted') state.refused += 1;
}

function fail(message: string): void {
  state.errors += 1;
  state.lastError = message;
}

class SimulatedCharger {
  private readonly socket: OcppSocket;
  private meter = Math.floor(Math.random() * 100_000);
  /** the transaction the benchmark opened (OCPP 1.6 only) */
  private benchTransactionId: number | undefined;
  /** a flood call of this charger is in flight */
  busy = false;
  benchReady = false;
  /** connector 1's last flood status was Unavailable */
  private toggled = false;

  constructor(
    private readonly spec: ChargerSpec,
    private readonly plan: GeneratorPlan,
  ) {
    this.socket = new OcppSocket(spec, {
      onOpen(ws) {
        sockets.add(ws);
        state.connected += 1;
      },
      onClose(ws) {
        if (sockets.delete(ws)) {
          state.connected -= 1;
          if (!stopping) state.disconnects += 1;
        }
      },
      onAnswer(ms) {
        record(state.histogram, ms);
        state.messages += 1;
      },
    });
  }

  connect(): Promise<void> {
    return this.socket.open(60_000);
  }

  call(action: string, payload: unknown): Promise<Record<string, unknown>> {
    return this.socket.call(action, payload);
  }

  private get is16(): boolean {
    return this.spec.protocol === 'ocpp1.6';
  }

  async boot(): Promise<void> {
    const boot = this.is16
      ? { chargePointVendor: 'LoadTest', chargePointModel: 'Sim-16', firmwareVersion: '1.0' }
      : { chargingStation: { vendorName: 'LoadTest', model: 'Sim-201', firmwareVersion: '1.0' }, reason: 'PowerUp' };
    await this.call('BootNotification', boot);
    state.booted += 1;
    await this.status('Available');
    state.ready += 1;
  }

  status(status: string, connector = 1): Promise<Record<string, unknown>> {
    const ts = new Date().toISOString();
    return this.is16
      ? this.call('StatusNotification', {
          connectorId: connector,
          errorCode: status === 'Faulted' ? 'GroundFailure' : 'NoError',
          status,
          timestamp: ts,
        })
      : this.call('StatusNotification', {
          timestamp: ts,
          connectorStatus: status === 'Charging' ? 'Occupied' : status,
          evseId: connector,
          connectorId: 1,
        });
  }

  /** The comparison plans' status after the boot: each connector's from the spec, else connector 1 Available. */
  async reportStatuses(): Promise<void> {
    const statuses = this.spec.statuses ?? ['Available'];
    for (let i = 0; i < statuses.length; i++) await this.status(statuses[i] ?? 'Available', i + 1);
  }

  /** A flood's status change: connector 1 Unavailable and Available by turns. */
  toggleStatus(): Promise<Record<string, unknown>> {
    this.toggled = !this.toggled;
    return this.status(this.toggled ? 'Unavailable' : 'Available');
  }

  heartbeatLoop(): void {
    const beat = (): void => {
      if (stopping) return;
      this.call('Heartbeat', {}).catch((err: Error) => fail(`Heartbeat: ${err.message}`));
    };
    // spread the first beat over the interval so that a ramp does not turn into waves
    const first = setTimeout(
      () => {
        beat();
        const t = setInterval(beat, this.plan.heartbeatS * 1000);
        timers.add(t);
      },
      Math.random() * this.plan.heartbeatS * 1000,
    );
    timers.add(first);
  }

  async transactionLoop(): Promise<void> {
    while (!stopping) {
      await sleep(Math.random() * 5000);
      if (stopping) return;
      try {
        await this.transaction();
        state.transactions += 1;
      } catch (err) {
        fail(`transaction: ${(err as Error).message}`);
        await sleep(2000);
      }
    }
  }

  private meterValues16(transactionId: number): unknown {
    return {
      connectorId: 1,
      transactionId,
      meterValue: [
        {
          timestamp: new Date().toISOString(),
          sampledValue: [{ value: String(this.meter), measurand: 'Energy.Active.Import.Register', unit: 'Wh' }],
        },
      ],
    };
  }

  private meterValue201(): unknown {
    return [
      {
        timestamp: new Date().toISOString(),
        sampledValue: [
          { value: this.meter, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' } },
        ],
      },
    ];
  }

  private async transaction(): Promise<void> {
    const idTag = `LT-${this.spec.id}`.slice(0, 20);
    const end = Date.now() + this.plan.transactionS * 1000;
    if (this.is16) {
      const transactionId = await this.startTransaction16(idTag);
      while (Date.now() < end && !stopping) {
        await sleep(this.plan.meterEveryS * 1000);
        this.meter += 250;
        await this.call('MeterValues', this.meterValues16(transactionId));
      }
      await this.call('StopTransaction', {
        transactionId,
        meterStop: this.meter,
        timestamp: new Date().toISOString(),
        reason: 'Local',
      });
      await this.status('Available');
      return;
    }
    await this.call('Authorize', { idToken: { idToken: idTag, type: 'ISO14443' } });
    const transactionId = `${this.spec.id}-${Date.now()}`.slice(0, 36);
    let seqNo = 0;
    const event = (eventType: string, triggerReason: string, extra: Record<string, unknown> = {}) =>
      this.call('TransactionEvent', {
        eventType,
        timestamp: new Date().toISOString(),
        triggerReason,
        seqNo: seqNo++,
        transactionInfo: { transactionId, ...(eventType === 'Ended' ? { stoppedReason: 'Local' } : {}) },
        evse: { id: 1, connectorId: 1 },
        meterValue: this.meterValue201(),
        ...extra,
      });
    const started = await event('Started', 'Authorized', { idToken: { idToken: idTag, type: 'ISO14443' } });
    countRefused(started.idTokenInfo);
    await this.status('Charging');
    while (Date.now() < end && !stopping) {
      await sleep(this.plan.meterEveryS * 1000);
      this.meter += 250;
      await event('Updated', 'MeterValuePeriodic');
    }
    await event('Ended', 'StopAuthorized');
    await this.status('Available');
  }

  /** Starts the one transaction whose meter values the benchmark sends (OCPP 1.6). */
  async openBenchTransaction(): Promise<void> {
    const idTag = `LT-${this.spec.id}`.slice(-20);
    this.benchTransactionId = await this.startTransaction16(idTag);
  }

  /** Authorize, StartTransaction and StatusNotification Charging (OCPP 1.6); the CSMS's transaction id. */
  private async startTransaction16(idTag: string): Promise<number> {
    await this.call('Authorize', { idTag });
    const started = await this.call('StartTransaction', {
      connectorId: 1,
      idTag,
      meterStart: this.meter,
      timestamp: new Date().toISOString(),
    });
    countRefused(started.idTagInfo);
    await this.status('Charging');
    return Number(started.transactionId);
  }

  /** One call of a flood: a meter value of the open transaction, a heartbeat or a status change. */
  floodCall(action: FloodOrder['action']): Promise<Record<string, unknown>> {
    if (action === 'Heartbeat') return this.call('Heartbeat', {});
    if (action === 'StatusNotification') return this.toggleStatus();
    this.meter += 10;
    return this.call('MeterValues', this.meterValues16(this.benchTransactionId ?? 0));
  }

  close(): void {
    this.socket.close(1000);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => {
    const t = setTimeout(r, ms);
    t.unref();
  });
}

const chargers: SimulatedCharger[] = [];
/** when a comparison plan arrived (performance.now()) */
let benchPlannedAt: number | undefined;

async function run(plan: GeneratorPlan): Promise<void> {
  let inFlight = 0;
  const started = performance.now();
  let index = 0;
  const startOne = async (spec: ChargerSpec): Promise<void> => {
    const c = new SimulatedCharger(spec, plan);
    chargers.push(c);
    inFlight += 1;
    try {
      // a refused or reset connection is retried with backoff, as chargers do
      for (let attempt = 1; ; attempt++) {
        try {
          await c.connect();
          break;
        } catch (err) {
          if (attempt >= 5 || stopping) throw err;
          state.retries += 1;
          state.lastRetryReason = (err as Error).message;
          await sleep(500 * attempt + Math.random() * 1000);
        }
      }
      if (plan.bench) await benchStart(c, plan.bench.openTransaction);
      else if (!plan.idle) {
        await c.boot();
        c.heartbeatLoop();
        if (spec.transacting) void c.transactionLoop();
      }
    } catch (err) {
      fail(`${spec.id}: ${(err as Error).message}`);
    } finally {
      inFlight -= 1;
    }
  };
  while (index < plan.chargers.length && !stopping) {
    // keep to the ramp: at most connectRate new connections per second since the start
    const due =
      plan.connectRate > 0 ? Math.floor(((performance.now() - started) / 1000) * plan.connectRate) + 1 : Infinity;
    if (index < due && inFlight < plan.maxConnecting) {
      const spec = plan.chargers[index++];
      if (spec) void startOne(spec);
      continue;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Bounds a flood call: a server that stops answering must not stall the flood forever. */
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** The comparison workloads' start: boot, status and (for MeterValues) one open transaction. */
async function benchStart(c: SimulatedCharger, openTransaction: boolean): Promise<void> {
  await c.call('BootNotification', {
    chargePointVendor: 'LoadTest',
    chargePointModel: 'Sim-16',
    firmwareVersion: '1.0',
  });
  state.booted += 1;
  await c.reportStatuses();
  if (openTransaction) await c.openBenchTransaction();
  c.benchReady = true;
  state.ready += 1;
  if (state.ready === chargers.length && benchPlannedAt !== undefined) {
    // the boot storm's time, on this process's clock, reported at once rather than within a second
    state.readyAfterMs = performance.now() - benchPlannedAt;
    sendReport();
  }
}

/** Runs a flood order: `inFlight` loops, each sending from the next ready charger without a call in flight. */
async function flood(order: FloodOrder): Promise<void> {
  const ready = chargers.filter((c) => c.benchReady);
  const report: FloodReport = {
    type: 'flood-done',
    messages: 0,
    errors: 0,
    lastError: undefined,
    histogram: emptyHistogram(),
    seconds: 0,
  };
  const started = performance.now();
  const end = started + order.seconds * 1000;
  let cursor = 0;
  const next = (): SimulatedCharger | undefined => {
    for (let tries = 0; tries < ready.length; tries++) {
      const c = ready[cursor++ % ready.length];
      if (c && !c.busy) return c;
    }
    return undefined;
  };
  const loop = async (): Promise<void> => {
    for (let c = next(); c && performance.now() < end && !stopping; c = next()) {
      c.busy = true;
      const t0 = performance.now();
      try {
        await withTimeout(c.floodCall(order.action), 30_000);
        record(report.histogram, performance.now() - t0);
        report.messages += 1;
      } catch (err) {
        report.errors += 1;
        report.lastError = (err as Error).message;
      } finally {
        c.busy = false;
      }
    }
  };
  await Promise.all(Array.from({ length: order.inFlight }, loop));
  report.seconds = (performance.now() - started) / 1000;
  process.send?.(report);
}

function sendReport(): void {
  const report: GeneratorReport = { type: 'report', ...state };
  process.send?.(report);
  state.histogram = emptyHistogram();
  state.messages = 0;
}

const reporter = setInterval(sendReport, 1000);

process.on('message', (m: ToGenerator) => {
  if (m.type === 'plan') {
    benchPlannedAt = m.bench ? performance.now() : undefined;
    void run(m);
  }
  if (m.type === 'flood') void flood(m);
  if (m.type === 'stop') {
    stopping = true;
    for (const t of timers) clearTimeout(t);
    for (const c of chargers) c.close();
    setTimeout(() => {
      clearInterval(reporter);
      process.send?.({ type: 'report', ...state } satisfies GeneratorReport);
      process.exit(0);
    }, 1000);
  }
});
process.on('disconnect', () => process.exit(0));
