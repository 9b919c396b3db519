/**
 * The OCPI success envelope (OCPI 2.2.1 transport_and_format.asciidoc, "Response format"), the
 * `respond` of every OCPI mount. Errors are core/errors.ts; nothing else in the module builds an
 * envelope.
 */
export type OcpiVersion = '2.1.1' | '2.2.1';

export interface SuccessEnvelope {
  status_code: 1000;
  status_message: 'Success';
  timestamp: string;
  data?: unknown;
}

/**
 * A payload already serialized to JSON bytes (a cached list page): the envelope is written
 * around it instead of parsing and serializing it again, and goes out as bytes, so the page is
 * not encoded to UTF-8 on every request.
 */
export class SerializedJson {
  constructor(readonly json: Buffer) {}
}

const DATA_CLOSE = Buffer.from('}');

/**
 * The whole answer around a cached page, per page and second: every request for the page within
 * that second gets the same bytes. A fresh 26 KB buffer per request cost more in the socket write
 * than building it (docs/PERFORMANCE.md), so the timestamp has whole seconds here.
 */
const enveloped = new WeakMap<Buffer, { second: number; body: Buffer }>();

export function ocpiEnvelope(data: unknown): SuccessEnvelope | Buffer {
  if (data instanceof SerializedJson) {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    const cached = enveloped.get(data.json);
    if (cached?.second === second) return cached.body;
    const timestamp = `${new Date(second * 1000).toISOString().slice(0, 19)}Z`;
    const head = Buffer.from(`{"status_code":1000,"status_message":"Success","timestamp":"${timestamp}","data":`);
    const body = Buffer.concat([head, data.json, DATA_CLOSE]);
    enveloped.set(data.json, { second, body });
    return body;
  }
  const envelope: SuccessEnvelope = {
    status_code: 1000,
    status_message: 'Success',
    timestamp: new Date().toISOString(),
  };
  // "data" is absent, not null, on answers that carry nothing (DELETE /credentials)
  if (data !== undefined) envelope.data = data;
  return envelope;
}
