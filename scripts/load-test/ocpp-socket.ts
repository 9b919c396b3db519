import WebSocket from 'ws';
import type { ChargerSpec } from './protocol.js';

/**
 * One simulated charger's OCPP-J connection on plain `ws` (deliberately not the server's code):
 * CALLs matched to their answers by id, and every CSMS call answered Accepted so that commands
 * in a mixed test do not stall. Shared by the load test's generators and the pricing benchmark.
 */
export interface OcppSocketHooks {
  /** the upgrade succeeded */
  onOpen?(ws: WebSocket): void;
  /** the socket closed (calls still waiting are rejected) */
  onClose?(ws: WebSocket): void;
  /** a CALLRESULT or CALLERROR came, `ms` after its CALL */
  onAnswer?(ms: number): void;
}

interface Pending {
  t0: number;
  resolve(payload: Record<string, unknown>): void;
  reject(err: Error): void;
}

export class OcppSocket {
  private ws: WebSocket | undefined;
  private nextId = 0;
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly spec: ChargerSpec,
    private readonly hooks: OcppSocketHooks = {},
  ) {}

  open(handshakeTimeoutMs: number): Promise<void> {
    const auth = Buffer.from(`${this.spec.id}:${this.spec.password}`).toString('base64');
    const ws = new WebSocket(this.spec.url, [this.spec.protocol], {
      headers: { Authorization: `Basic ${auth}` },
      perMessageDeflate: false,
      handshakeTimeout: handshakeTimeoutMs,
    });
    this.ws = ws;
    return new Promise((resolve, reject) => {
      ws.once('open', () => {
        this.hooks.onOpen?.(ws);
        resolve();
      });
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode ?? 0}`)));
      ws.once('error', (err) => reject(err));
      ws.on('close', () => {
        this.hooks.onClose?.(ws);
        for (const p of this.pending.values()) p.reject(new Error('connection closed'));
        this.pending.clear();
      });
      ws.on('message', (data) => this.onMessage(data.toString()));
    });
  }

  private onMessage(text: string): void {
    const frame = JSON.parse(text) as [number, string, ...unknown[]];
    if (frame[0] === 2) {
      this.ws?.send(JSON.stringify([3, frame[1], { status: 'Accepted' }]));
      return;
    }
    const p = this.pending.get(frame[1]);
    if (!p) return;
    this.pending.delete(frame[1]);
    this.hooks.onAnswer?.(performance.now() - p.t0);
    if (frame[0] === 3) p.resolve((frame[2] ?? {}) as Record<string, unknown>);
    else p.reject(new Error(`CALLERROR ${String(frame[2])}: ${String(frame[3])}`));
  }

  call(action: string, payload: unknown): Promise<Record<string, unknown>> {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return Promise.reject(new Error('not connected'));
    const id = String(++this.nextId);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { t0: performance.now(), resolve, reject });
      ws.send(JSON.stringify([2, id, action, payload]));
    });
  }

  close(code = 1000): void {
    this.ws?.close(code);
  }
}
