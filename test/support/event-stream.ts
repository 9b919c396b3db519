import { expect } from 'chai';

/** An operator's `GET /v1/events` stream: the text received so far, and its end. */
export interface EventStream {
  received: string[];
  close(): Promise<void>;
}

/** Opens `GET /v1/events` on `baseUrl` with the operator key and reads it in the background. */
export async function openEventStream(baseUrl: string, apiKey: string): Promise<EventStream> {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/v1/events`, {
    headers: { Authorization: `Bearer ${apiKey}` },
    signal: controller.signal,
  });
  expect(res.status).to.equal(200);
  const body = res.body;
  if (!body) throw new Error('no event stream body');
  const received: string[] = [];
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of body) received.push(decoder.decode(chunk));
  })().catch(() => undefined);
  return {
    received,
    close: async () => {
      controller.abort();
      await reading;
    },
  };
}

/** The data of the events of `type` received so far, parsed. */
export function eventsOf(stream: EventStream, type: string): unknown[] {
  return stream.received
    .join('')
    .split('\n\n')
    .filter((block) => block.startsWith(`event: ${type}\n`))
    .map((block) => JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as unknown);
}
