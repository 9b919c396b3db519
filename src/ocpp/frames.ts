/**
 * OCPP-J RPC framing (1.6-J section 4, 2.0.1 part 4 section 4): every frame is a JSON array
 * whose first element is the message type.
 *   CALL       [2, messageId, action, payload]
 *   CALLRESULT [3, messageId, payload]
 *   CALLERROR  [4, messageId, errorCode, errorDescription, errorDetails]
 */
export const CALL = 2;
export const CALLRESULT = 3;
export const CALLERROR = 4;

export type InboundFrame =
  | { t: 'call'; id: string; action: string; payload: unknown }
  | { t: 'result'; id: string; payload: unknown }
  | { t: 'error'; id: string; code: string; description: string; details: unknown }
  /** cannot be understood; `id` is '-1' when not even the message id could be read (2.0.1 4.2.3) */
  | { t: 'malformed'; id: string; reason: 'not-json' | 'not-a-frame' | 'unknown-type'; description: string }
  /**
   * a CALLRESULT or CALLERROR that cannot be read (too short, no message id): a CALLERROR answers
   * a CALL only, so it is dropped, never answered (an error for an error could go back and forth)
   */
  | { t: 'stray'; description: string };

export function parseFrame(text: string): InboundFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { t: 'malformed', id: '-1', reason: 'not-json', description: 'frame is not JSON' };
  }
  const answer = Array.isArray(value) && (value[0] === CALLRESULT || value[0] === CALLERROR);
  // two elements are enough to read a message id: [9, "m9"] is answered under "m9"
  if (!Array.isArray(value) || value.length < 2) {
    if (answer) return { t: 'stray', description: 'an answer frame without its fields' };
    return { t: 'malformed', id: '-1', reason: 'not-a-frame', description: 'frame is not an OCPP-J array' };
  }
  if (answer && value.length < 3) return { t: 'stray', description: 'an answer frame without its fields' };
  const type: unknown = value[0];
  const id: unknown = value[1];
  if (typeof id !== 'string' || id.length === 0 || id.length > 36) {
    if (answer) return { t: 'stray', description: 'an answer frame without a valid message id' };
    return {
      t: 'malformed',
      id: '-1',
      reason: 'not-a-frame',
      description: 'message id must be a string of at most 36 characters',
    };
  }
  switch (type) {
    case CALL:
      if (value.length !== 4 || typeof value[2] !== 'string') {
        return { t: 'malformed', id, reason: 'not-a-frame', description: 'CALL must be [2, id, action, payload]' };
      }
      return { t: 'call', id, action: value[2], payload: value[3] };
    case CALLRESULT:
      return { t: 'result', id, payload: value[2] };
    case CALLERROR:
      return {
        t: 'error',
        id,
        code: typeof value[2] === 'string' ? value[2] : 'GenericError',
        description: typeof value[3] === 'string' ? value[3] : '',
        details: value[4] ?? {},
      };
    default:
      return {
        t: 'malformed',
        id,
        reason: 'unknown-type',
        description: `unknown message type ${JSON.stringify(type)}`,
      };
  }
}

export function callFrame(id: string, action: string, payload: unknown): string {
  return JSON.stringify([CALL, id, action, payload]);
}

export function resultFrame(id: string, payload: unknown): string {
  return JSON.stringify([CALLRESULT, id, payload]);
}

export function errorFrame(id: string, code: string, description: string, details: Record<string, unknown>): string {
  return JSON.stringify([CALLERROR, id, code, description.slice(0, 255), boundedErrorDetails(details)]);
}

/** The longest string of a CALLERROR's details (characters); a longer one is cut, ending in `…`. */
const MAX_DETAIL_CHARS = 200;
/** The largest details object sent (bytes of its JSON); a larger one is replaced by what says so. */
const MAX_DETAILS_BYTES = 2048;

/**
 * A CALLERROR's details within bounds: they may quote the charger's own frame (the path of a bad
 * string is made of its keys), and a 200 KB frame was answered with 400 KB of details, larger
 * than the frames this CSMS takes.
 */
export function boundedErrorDetails(details: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(details))
    out[key] =
      typeof value === 'string' && value.length > MAX_DETAIL_CHARS ? `${value.slice(0, MAX_DETAIL_CHARS)}…` : value;
  const bytes = Buffer.byteLength(JSON.stringify(out));
  return bytes > MAX_DETAILS_BYTES ? { truncated: true, bytes } : out;
}
