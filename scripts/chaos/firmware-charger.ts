import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';

export type OcppProtocol = 'ocpp1.6' | 'ocpp2.0.1';

export interface ChargerIdentity {
  id: string;
  password: string;
  protocol: OcppProtocol;
}

export interface FirmwareOptions {
  /** ws:// bases the load balancer routes to right now; a (re)connect picks one at random */
  targets(): string[];
  /** the base of the very first connection, so that chargers start spread over the processes */
  firstTarget: string;
  /** a CALL unanswered this long: the socket is dropped and reopened, as firmware does */
  callTimeoutMs: number;
  meterEveryMs: number;
  meterValuesPerTransaction: number;
  random(): number;
}

/** One transaction as the charger saw it: what it queued and what the CSMS acknowledged. */
export interface TransactionRecord {
  /** 1.6: the CSMS's id from the StartTransaction reply; 2.0.1: the charger's own */
  transactionId: string | undefined;
  meterStart: number;
  startAcked: boolean;
  /** every MeterValues / TransactionEvent Updated value the CSMS answered with a CALLRESULT */
  metersAcked: number[];
  /** meterStop, once the stop was queued */
  meterStop: number | undefined;
  stopAcked: boolean;
}

export interface ChargerCounters {
  connects: number;
  /** refused upgrades by HTTP status */
  refused: Record<string, number>;
  connectErrors: number;
  callErrors: Record<string, number>;
  callTimeouts: number;
  csmsCalls: number;
}

type Reply =
  | { kind: 'result'; payload: Record<string, unknown> }
  | { kind: 'error'; code: string }
  | { kind: 'timeout' }
  | { kind: 'closed' };

interface Queued {
  action: string;
  payload: unknown;
  onAck(result: Record<string, unknown>): void;
}

interface Enqueued extends Queued {
  /** the charger was closed before an answer came */
  abandon(): void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A charger that behaves like real firmware under failures, written on plain `ws` (not the
 * server's code): transaction messages wait in a queue and the head is resent until the CSMS
 * answers it with a CALLRESULT (OCPP 1.6 section 4.8 "transaction-related messages", 2.0.1
 * E.04 "offline behaviour"); a CALLERROR is retried after a pause; a CALL with no answer or a
 * closed socket makes it reconnect to any target and carry on with the same queue. Resent
 * payloads are byte-identical, which is what the CSMS's idempotency rests on.
 */
export class FirmwareCharger {
  readonly transactions: TransactionRecord[] = [];
  readonly counters: ChargerCounters = {
    connects: 0,
    refused: {},
    connectErrors: 0,
    callErrors: {},
    callTimeouts: 0,
    csmsCalls: 0,
  };
  /** when each socket got its first CALLRESULT: the charger was back online then */
  readonly onlineAt: number[] = [];
  /** when the last CALLRESULT came */
  lastAckAt = 0;
  /** the base of the open socket, if any */
  target: string | undefined;
  private readonly queue: Enqueued[] = [];
  private wake: (() => void) | undefined;
  private socket: WebSocket | undefined;
  private booted = false;
  private producing = true;
  private leaveOpen = false;
  private producerDone = false;
  private closed = false;
  private meter: number;
  private running: Promise<void> | undefined;

  constructor(
    readonly identity: ChargerIdentity,
    private readonly opts: FirmwareOptions,
  ) {
    this.meter = 1000 + Math.floor(opts.random() * 100_000);
  }

  /** Connects and runs transactions until `finish` (then drains) and `close`. */
  start(): void {
    this.running = Promise.all([this.connectionLoop(), this.produce()]).then(() => undefined);
  }

  /** No new transactions; the open one is stopped, or left open when `leaveOpen`. */
  finish(leaveOpen: boolean): void {
    this.producing = false;
    this.leaveOpen = leaveOpen;
  }

  /** Everything it produced was acknowledged. */
  get drained(): boolean {
    return this.producerDone && this.queue.length === 0;
  }

  get queued(): number {
    return this.queue.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.producing = false;
    this.wake?.();
    this.socket?.close(1000);
    for (const q of this.queue) q.abandon();
    await this.running;
  }

  private enqueue(
    action: string,
    payload: unknown,
    onAck: (r: Record<string, unknown>) => void = () => undefined,
  ): Promise<void> {
    // after close nothing will be sent; a producer waiting here must not wait forever
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.queue.push({
        action,
        payload,
        onAck: (r) => {
          onAck(r);
          resolve();
        },
        abandon: resolve,
      });
      this.wake?.();
    });
  }

  private async connectionLoop(): Promise<void> {
    let failures = 0;
    let base: string | undefined = this.opts.firstTarget;
    while (!this.closed) {
      const targets = this.opts.targets();
      base ??= targets[Math.floor(this.opts.random() * targets.length)];
      const ws = base === undefined ? undefined : await this.open(base);
      if (ws && base !== undefined) {
        failures = 0;
        await this.converse(ws, base);
      } else failures += 1;
      base = undefined;
      // back-off with jitter so that a fleet does not reconnect in waves
      if (!this.closed) await sleep(Math.min(2000, 100 * 2 ** Math.min(failures, 5)) * (0.5 + this.opts.random()));
    }
  }

  private open(base: string): Promise<WebSocket | undefined> {
    const { id, password, protocol } = this.identity;
    const ws = new WebSocket(`${base}/ocpp/${id}`, [protocol], {
      headers: { Authorization: `Basic ${Buffer.from(`${id}:${password}`).toString('base64')}` },
      perMessageDeflate: false,
      handshakeTimeout: this.opts.callTimeoutMs,
    });
    // every error of this socket ends up here or in 'close'; none may go unhandled
    ws.on('error', () => undefined);
    return new Promise((resolve) => {
      let settled = false;
      const settle = (result: WebSocket | undefined): void => {
        if (settled) return;
        settled = true;
        resolve(result);
      };
      ws.once('open', () => {
        this.counters.connects += 1;
        settle(ws);
      });
      ws.once('unexpected-response', (_req, res) => {
        const status = String(res.statusCode ?? 0);
        this.counters.refused[status] = (this.counters.refused[status] ?? 0) + 1;
        settled = true;
        res.resume();
        ws.terminate();
        resolve(undefined);
      });
      ws.once('close', () => {
        if (!settled) this.counters.connectErrors += 1;
        settle(undefined);
      });
    });
  }

  /** One socket's life: boot (or a status on a reconnect), then the queue head by head. */
  private async converse(ws: WebSocket, base: string): Promise<void> {
    const calls = new SocketCalls(ws, this.opts.callTimeoutMs, (id, action) => {
      this.counters.csmsCalls += 1;
      ws.send(JSON.stringify(this.answerCsms(id, action)));
    });
    this.socket = ws;
    this.target = base;
    let online = false;
    try {
      const hello = this.booted ? this.statusNotification() : this.bootNotification();
      let next: Queued | undefined = { ...hello, onAck: () => (this.booted = true) };
      while (!this.closed && ws.readyState === WebSocket.OPEN) {
        next ??= this.queue[0];
        if (!next) {
          await Promise.race([new Promise<void>((r) => (this.wake = r)), calls.closed]);
          continue;
        }
        const reply = await calls.exchange(next.action, next.payload);
        if (reply.kind === 'result') {
          this.lastAckAt = Date.now();
          if (!online) this.onlineAt.push(Date.now());
          online = true;
          if (next === this.queue[0]) this.queue.shift();
          next.onAck(reply.payload);
          next = undefined;
        } else if (reply.kind === 'error') {
          this.counters.callErrors[reply.code] = (this.counters.callErrors[reply.code] ?? 0) + 1;
          await sleep(200 + this.opts.random() * 300);
        } else {
          if (reply.kind === 'timeout') this.counters.callTimeouts += 1;
          break;
        }
      }
    } finally {
      this.socket = undefined;
      this.target = undefined;
      this.wake = undefined;
      ws.terminate();
    }
  }

  private answerCsms(id: string, action: string): unknown[] {
    // the poller's remote starts: declined, so that they do not start transactions of their own
    if (action === 'RemoteStartTransaction' || action === 'RequestStartTransaction')
      return [3, id, { status: 'Rejected' }];
    if (action === 'RemoteStopTransaction' || action === 'RequestStopTransaction')
      return [3, id, { status: 'Rejected' }];
    return [4, id, 'NotImplemented', `${action} is not simulated`, {}];
  }

  private get is16(): boolean {
    return this.identity.protocol === 'ocpp1.6';
  }

  private bootNotification(): { action: string; payload: unknown } {
    return {
      action: 'BootNotification',
      payload: this.is16
        ? { chargePointVendor: 'Chaos', chargePointModel: 'Firmware-16', firmwareVersion: '1.0' }
        : {
            chargingStation: { vendorName: 'Chaos', model: 'Firmware-201', firmwareVersion: '1.0' },
            reason: 'PowerUp',
          },
    };
  }

  private statusNotification(): { action: string; payload: unknown } {
    const timestamp = new Date().toISOString();
    return {
      action: 'StatusNotification',
      payload: this.is16
        ? { connectorId: 1, errorCode: 'NoError', status: 'Available', timestamp }
        : { timestamp, connectorStatus: 'Available', evseId: 1, connectorId: 1 },
    };
  }

  private async produce(): Promise<void> {
    try {
      while (this.producing) {
        await this.transaction();
        await sleep(100 + this.opts.random() * 200);
      }
    } finally {
      this.producerDone = true;
    }
  }

  private async transaction(): Promise<void> {
    const n = this.transactions.length + 1;
    const tx: TransactionRecord = {
      transactionId: this.is16 ? undefined : `${this.identity.id}-${n}`.slice(-36),
      meterStart: this.meter,
      startAcked: false,
      metersAcked: [],
      meterStop: undefined,
      stopAcked: false,
    };
    this.transactions.push(tx);
    const messages = new TransactionMessages(this.is16, tx, `CHAOS-${n}`);
    const start = messages.start();
    await this.enqueue(start.action, start.payload, (r) => {
      if (this.is16) tx.transactionId = String(r.transactionId);
      tx.startAcked = true;
    });
    if (this.closed) return;
    for (let i = 0; i < this.opts.meterValuesPerTransaction && this.producing; i++) {
      await sleep(this.opts.meterEveryMs);
      this.meter += 10 + Math.floor(this.opts.random() * 490);
      const wh = this.meter;
      const meter = messages.meter(wh);
      void this.enqueue(meter.action, meter.payload, () => void tx.metersAcked.push(wh));
    }
    if (!this.producing && this.leaveOpen) return;
    tx.meterStop = this.meter;
    const stop = messages.stop(this.meter);
    await this.enqueue(stop.action, stop.payload, () => (tx.stopAcked = true));
  }
}

interface Message {
  action: string;
  payload: unknown;
}

/** The wire messages of one transaction, in the charger's protocol (2.0.1 numbers its events). */
class TransactionMessages {
  private seqNo = 0;

  constructor(
    private readonly is16: boolean,
    private readonly tx: TransactionRecord,
    private readonly idTag: string,
  ) {}

  start(): Message {
    const timestamp = new Date().toISOString();
    if (this.is16) {
      const payload = { connectorId: 1, idTag: this.idTag, meterStart: this.tx.meterStart, timestamp };
      return { action: 'StartTransaction', payload };
    }
    return { action: 'TransactionEvent', payload: this.event201('Started', this.tx.meterStart) };
  }

  meter(wh: number): Message {
    if (!this.is16) return { action: 'TransactionEvent', payload: this.event201('Updated', wh) };
    const meterValue = [
      {
        timestamp: new Date().toISOString(),
        sampledValue: [{ value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh' }],
      },
    ];
    return {
      action: 'MeterValues',
      payload: { connectorId: 1, transactionId: Number(this.tx.transactionId), meterValue },
    };
  }

  stop(meterStop: number): Message {
    if (!this.is16) return { action: 'TransactionEvent', payload: this.event201('Ended', meterStop) };
    const timestamp = new Date().toISOString();
    const payload = { transactionId: Number(this.tx.transactionId), meterStop, timestamp, reason: 'Local' };
    return { action: 'StopTransaction', payload };
  }

  private event201(eventType: 'Started' | 'Updated' | 'Ended', wh: number): unknown {
    const triggerReason =
      eventType === 'Started' ? 'Authorized' : eventType === 'Ended' ? 'StopAuthorized' : 'MeterValuePeriodic';
    return {
      eventType,
      timestamp: new Date().toISOString(),
      triggerReason,
      seqNo: this.seqNo++,
      transactionInfo: {
        transactionId: this.tx.transactionId,
        ...(eventType === 'Ended' ? { stoppedReason: 'Local' } : {}),
      },
      ...(eventType === 'Started' ? { idToken: { idToken: this.idTag, type: 'ISO14443' } } : {}),
      evse: { id: 1, connectorId: 1 },
      meterValue: [
        {
          timestamp: new Date().toISOString(),
          sampledValue: [{ value: wh, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' } }],
        },
      ],
    };
  }
}

/**
 * The CALLs of one socket: one outstanding at a time (OCPP-J), answered by a CALLRESULT or
 * CALLERROR with its id, or ended by a timeout or the socket closing. CALLs from the CSMS go to
 * `onCsmsCall`.
 */
class SocketCalls {
  readonly closed: Promise<void>;
  private pending: { id: string; finish(r: Reply): void } | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly timeoutMs: number,
    onCsmsCall: (id: string, action: string) => void,
  ) {
    this.closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    ws.on('message', (data) => {
      let frame: unknown;
      try {
        frame = JSON.parse(String(data));
      } catch {
        return;
      }
      if (!Array.isArray(frame)) return;
      const waiting = this.pending;
      if (frame[0] === 2 && typeof frame[1] === 'string') onCsmsCall(frame[1], String(frame[2]));
      else if (waiting && (frame[0] === 3 || frame[0] === 4) && waiting.id === frame[1]) {
        const payload: unknown = frame[2];
        waiting.finish(
          frame[0] === 3
            ? { kind: 'result', payload: isRecord(payload) ? payload : {} }
            : { kind: 'error', code: String(payload) },
        );
      }
    });
  }

  exchange(action: string, payload: unknown): Promise<Reply> {
    return new Promise((resolve) => {
      const id = randomUUID();
      const finish = (r: Reply): void => {
        if (this.pending?.id !== id) return;
        this.pending = undefined;
        clearTimeout(timer);
        resolve(r);
      };
      const timer = setTimeout(() => finish({ kind: 'timeout' }), this.timeoutMs);
      this.pending = { id, finish };
      void this.closed.then(() => finish({ kind: 'closed' }));
      this.ws.send(JSON.stringify([2, id, action, payload]), (err) => {
        if (err) finish({ kind: 'closed' });
      });
    });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
