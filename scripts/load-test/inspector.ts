import { createServer } from 'node:net';
import WebSocket from 'ws';

/** A free loopback port for a child's --inspect. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export interface MemorySample {
  rss: number;
  heapUsed: number;
  external: number;
}

/**
 * Forces a full garbage collection in a process started with --inspect and reads its memory,
 * so that what is compared is memory held by live objects, not garbage a busy heap has not
 * collected yet. Used for the platform and the bare ws baseline alike.
 */
export async function memoryAfterGc(inspectPort: number): Promise<MemorySample> {
  const list = (await fetch(`http://127.0.0.1:${inspectPort}/json/list`).then((r) => r.json())) as Array<{
    webSocketDebuggerUrl: string;
  }>;
  const url = list[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error('no inspector target');
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let next = 0;
  const send = (method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> => {
    const id = ++next;
    return new Promise((resolve) => {
      const onMessage = (data: WebSocket.RawData): void => {
        const msg = JSON.parse(data.toString()) as { id?: number; result?: Record<string, unknown> };
        if (msg.id !== id) return;
        ws.off('message', onMessage);
        resolve(msg.result ?? {});
      };
      ws.on('message', onMessage);
      ws.send(JSON.stringify({ id, method, params }));
    });
  };
  try {
    await send('HeapProfiler.collectGarbage');
    await send('HeapProfiler.collectGarbage');
    const res = await send('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    });
    const value = (res.result as { value?: string } | undefined)?.value ?? '{}';
    const m = JSON.parse(value) as MemorySample;
    return { rss: m.rss, heapUsed: m.heapUsed, external: m.external };
  } finally {
    ws.close();
  }
}
