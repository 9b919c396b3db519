import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';

/** A frame the test charger received. */
export type Frame =
  | [2, string, string, Record<string, unknown>]
  | [3, string, Record<string, unknown>]
  | [4, string, string, string, Record<string, unknown>];

export interface ConnectOptions {
  url: string;
  username?: string;
  password?: string;
  protocols: string[];
}

/** How a connection attempt ended: a socket, or the HTTP status of a refused upgrade. */
export async function tryConnect(
  opts: ConnectOptions,
): Promise<{ ok: true; charger: TestCharger } | { ok: false; status: number }> {
  const headers: Record<string, string> = {};
  if (opts.username !== undefined)
    headers.Authorization = `Basic ${Buffer.from(`${opts.username}:${opts.password ?? ''}`).toString('base64')}`;
  const ws = new WebSocket(opts.url, opts.protocols, { headers, perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ok: true, charger: new TestCharger(ws) }));
    ws.once('unexpected-response', (_req, res) => {
      resolve({ ok: false, status: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.once('error', (err) => reject(err));
  });
}

export async function connect(opts: ConnectOptions): Promise<TestCharger> {
  const r = await tryConnect(opts);
  if (!r.ok) throw new Error(`upgrade refused with ${r.status}`);
  return r.charger;
}

/**
 * A charger for tests written straight on `ws`, so that it can also send what a library would
 * refuse to (broken frames, invalid payloads). CSMS calls are answered by `answers` per action.
 */
export class TestCharger {
  readonly received: Frame[] = [];
  readonly csmsCalls: Array<{ action: string; payload: Record<string, unknown> }> = [];
  answers: Record<string, Record<string, unknown>> = {};
  closeCode: number | undefined;
  readonly closed: Promise<number>;
  private waiters: Array<{ match: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];

  constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) =>
      ws.once('close', (code) => {
        this.closeCode = code;
        resolve(code);
      }),
    );
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as Frame;
      this.received.push(frame);
      if (frame[0] === 2) {
        this.csmsCalls.push({ action: frame[2], payload: frame[3] });
        const answer = this.answers[frame[2]];
        if (answer) ws.send(JSON.stringify([3, frame[1], answer]));
      }
      for (const w of [...this.waiters]) {
        if (w.match(frame)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(frame);
        }
      }
    });
  }

  get protocol(): string {
    return this.ws.protocol;
  }

  /** The first frame from index `from` on that matches, now or later. */
  waitFor(match: (f: Frame) => boolean, timeoutMs = 5000, from = 0): Promise<Frame> {
    const already = this.received.slice(from).find(match);
    if (already) return Promise.resolve(already);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no matching frame in time')), timeoutMs);
      this.waiters.push({
        match,
        resolve: (f) => {
          clearTimeout(timer);
          resolve(f);
        },
      });
    });
  }

  /** Waits for the first CSMS CALL of this action. */
  async csmsCall(action: string, timeoutMs = 5000): Promise<{ id: string; payload: Record<string, unknown> }> {
    const f = await this.waitFor((x) => x[0] === 2 && x[2] === action, timeoutMs);
    return { id: f[1], payload: f[3] as Record<string, unknown> };
  }

  /** Sends raw text, waiting for nothing. */
  sendText(text: string): void {
    this.ws.send(text);
  }

  /** Sends raw text and waits for the answer to `id`. */
  async sendRaw(text: string, id: string): Promise<Frame> {
    const wait = this.waitFor((f) => (f[0] === 3 || f[0] === 4) && f[1] === id, 5000, this.received.length);
    this.ws.send(text);
    return wait;
  }

  async callFrame(action: string, payload: unknown, id: string = randomUUID()): Promise<Frame> {
    return this.sendRaw(JSON.stringify([2, id, action, payload]), id);
  }

  /** A CALL that must succeed; returns the CALLRESULT payload. */
  async call<T = Record<string, unknown>>(action: string, payload: unknown, id?: string): Promise<T> {
    const f = await this.callFrame(action, payload, id);
    if (f[0] !== 3) throw new Error(`${action} answered ${JSON.stringify(f)}`);
    return f[2] as T;
  }

  close(): Promise<number> {
    this.ws.close(1000);
    return this.closed;
  }
}
