import { randomBytes } from 'node:crypto';
import { createConnection, type Socket } from 'node:net';
import { eventually } from '../../support/eventually.js';

/**
 * A TCP client that speaks HTTP and WebSocket framing by hand, so a test can send what no
 * WebSocket library would: half a request, a frame with a reserved opcode, invalid UTF-8, a
 * length past every limit.
 */
export class RawClient {
  private buf = Buffer.alloc(0);
  private closedFlag = false;
  /** bytes after the HTTP response head (WebSocket frames once upgraded) */
  private frames = Buffer.alloc(0);
  private head: { status: number; headers: Record<string, string> } | undefined;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      if (this.head) {
        this.frames = Buffer.concat([this.frames, chunk]);
        return;
      }
      this.buf = Buffer.concat([this.buf, chunk]);
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = this.buf.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      this.head = { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0), headers };
      this.frames = this.buf.subarray(end + 4);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.closedFlag = true;
    });
  }

  static connect(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  /** An upgrade request; with `user` it carries HTTP Basic credentials. */
  static upgradeRequest(
    path: string,
    opts: { protocol?: string; user?: string; password?: string; extra?: string } = {},
  ): string {
    const auth =
      opts.user === undefined
        ? ''
        : `Authorization: Basic ${Buffer.from(`${opts.user}:${opts.password ?? ''}`).toString('base64')}\r\n`;
    return (
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n` +
      `${opts.protocol ? `Sec-WebSocket-Protocol: ${opts.protocol}\r\n` : ''}${auth}${opts.extra ?? ''}\r\n`
    );
  }

  /** Completes an upgrade with valid credentials; throws unless the server answers 101. */
  static async upgraded(
    port: number,
    path: string,
    opts: { protocol: string; user: string; password: string },
  ): Promise<RawClient> {
    const client = await RawClient.connect(port);
    client.write(RawClient.upgradeRequest(path, opts));
    const res = await client.response();
    if (res.status !== 101) throw new Error(`upgrade answered ${res.status}`);
    return client;
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  write(data: string | Buffer): void {
    if (!this.socket.destroyed) this.socket.write(data);
  }

  /** The HTTP response head, once it has arrived. */
  response(timeoutMs = 5000): Promise<{ status: number; headers: Record<string, string> }> {
    return eventually(async () => this.head, { timeoutMs, everyMs: 10, what: 'an HTTP answer' });
  }

  /**
   * The status code of the server's close frame, 1005 for one without a code, or 'none' when
   * the socket closed without one.
   */
  closeCode(timeoutMs = 5000): Promise<number | 'none'> {
    return eventually(
      async () => {
        const code = closeCodeIn(this.frames);
        if (code !== undefined) return code;
        return this.closedFlag ? 'none' : undefined;
      },
      { timeoutMs, everyMs: 10, what: 'a close frame' },
    );
  }

  /** The text frames the server sent so far. */
  texts(): string[] {
    return serverFrames(this.frames)
      .filter((f) => f.opcode === 1)
      .map((f) => f.payload.toString('utf8'));
  }

  /** The opcodes of the frames the server sent so far, in order. */
  opcodes(): number[] {
    return serverFrames(this.frames).map((f) => f.opcode);
  }

  destroy(): void {
    this.socket.destroy();
  }
}

export interface FrameSpec {
  opcode: number;
  payload?: Buffer | string;
  fin?: boolean;
  /** RSV1-3 as the bits 0b100, 0b010, 0b001 */
  rsv?: number;
  /** clients must mask (RFC 6455 section 5.3); false sends an unmasked frame */
  masked?: boolean;
  /** the length written in the header, when it should differ from the payload's */
  declaredLength?: bigint;
}

/** One client-to-server WebSocket frame (RFC 6455 section 5.2). */
export function encodeFrame(f: FrameSpec): Buffer {
  const payload = typeof f.payload === 'string' ? Buffer.from(f.payload, 'utf8') : (f.payload ?? Buffer.alloc(0));
  const length = f.declaredLength ?? BigInt(payload.length);
  const masked = f.masked ?? true;
  const first = ((f.fin ?? true) ? 0x80 : 0) | ((f.rsv ?? 0) << 4) | (f.opcode & 0x0f);
  let header: Buffer;
  if (length < 126n) header = Buffer.from([first, (masked ? 0x80 : 0) | Number(length)]);
  else if (length < 65536n) {
    header = Buffer.alloc(4);
    header.writeUInt8(first, 0);
    header.writeUInt8((masked ? 0x80 : 0) | 126, 1);
    header.writeUInt16BE(Number(length), 2);
  } else {
    header = Buffer.alloc(10);
    header.writeUInt8(first, 0);
    header.writeUInt8((masked ? 0x80 : 0) | 127, 1);
    header.writeBigUInt64BE(length, 2);
  }
  if (!masked) return Buffer.concat([header, payload]);
  const mask = randomBytes(4);
  const body = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] ?? 0)));
  return Buffer.concat([header, mask, body]);
}

function serverFrames(data: Buffer): Array<{ opcode: number; payload: Buffer }> {
  const out: Array<{ opcode: number; payload: Buffer }> = [];
  let at = 0;
  while (at + 2 <= data.length) {
    const opcode = (data[at] ?? 0) & 0x0f;
    let len = (data[at + 1] ?? 0) & 0x7f;
    let start = at + 2;
    if (len === 126) {
      if (start + 2 > data.length) break;
      len = data.readUInt16BE(start);
      start += 2;
    } else if (len === 127) {
      if (start + 8 > data.length) break;
      len = Number(data.readBigUInt64BE(start));
      start += 8;
    }
    if (start + len > data.length) break;
    out.push({ opcode, payload: data.subarray(start, start + len) });
    at = start + len;
  }
  return out;
}

function closeCodeIn(data: Buffer): number | undefined {
  const close = serverFrames(data).find((f) => f.opcode === 8);
  if (!close) return undefined;
  return close.payload.length >= 2 ? close.payload.readUInt16BE(0) : 1005;
}
