/**
 * The largest payload (bytes) `textFrame` builds a frame for: the most a 16-bit length holds. A
 * larger one (a long local list or report, rare) goes through ws, which writes its header and
 * payload without copying the payload.
 */
const MAX_WHOLE_FRAME_BYTES = 0xffff;

/**
 * A final, unmasked WebSocket text frame holding `text` (RFC 6455 5.2; a server never masks), in
 * one buffer: header and payload leave in one write. ws writes them as two chunks corked
 * together, which costs Node's stream code a second chunk and a `writev` for every answer a
 * charger gets (docs/PERFORMANCE.md, hot path, "Twenty-eighth sitting"). Undefined above
 * `MAX_WHOLE_FRAME_BYTES`.
 */
export function textFrame(text: string): Buffer | undefined {
  const length = Buffer.byteLength(text);
  if (length > MAX_WHOLE_FRAME_BYTES) return undefined;
  const head = length < 126 ? 2 : 4;
  const frame = Buffer.allocUnsafe(head + length);
  frame[0] = 0x81; // FIN, opcode 1 (text)
  if (head === 2) frame[1] = length;
  else {
    frame[1] = 126; // a 16-bit length follows
    frame.writeUInt16BE(length, 2);
  }
  frame.write(text, head, 'utf8');
  return frame;
}
