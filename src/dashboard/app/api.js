// The console's only way out: the public /v1 API with the operator key, and its event stream.
const KEY = 'csms-api-key';

// The key lives for the tab's session (sessionStorage), never on disk for later scripts of this
// origin to read, never in a log. A key an older dashboard left in localStorage is moved over once.
const legacy = localStorage.getItem(KEY);
if (legacy !== null) {
  sessionStorage.setItem(KEY, legacy);
  localStorage.removeItem(KEY);
}

export const auth = {
  get key() {
    return sessionStorage.getItem(KEY) ?? '';
  },
  set(key) {
    sessionStorage.setItem(KEY, key);
  },
  clear() {
    sessionStorage.removeItem(KEY);
  },
};

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

const authHeader = () => (auth.key ? { Authorization: `Bearer ${auth.key}` } : {});

/**
 * A 422 entry as an operator reads it: the field it is about, the schema's words, and what the
 * field takes when the schema says (a pattern of printable characters, a length): "id_tag: must
 * match pattern ... (printable ASCII, not blank)"; a value set is in the message itself
 * ("type: must be one of "soft", "hard"").
 */
export function detailText(d) {
  const field = (d.loc ?? []).filter((p) => p !== 'body' && p !== 'query' && p !== 'path').join('.');
  const ctx = d.ctx ?? {};
  const hint =
    ctx.expected !== undefined && !Array.isArray(ctx.expected)
      ? ` (${JSON.stringify(ctx.expected)})`
      : ctx.pattern === '^[ -~]*[!-~][ -~]*$'
        ? ' (printable ASCII, not blank)'
        : ctx.max_length !== undefined
          ? ` (at most ${ctx.max_length} characters)`
          : ctx.min_length !== undefined
            ? ` (at least ${ctx.min_length})`
            : '';
  return `${field ? `${field}: ` : ''}${d.msg}${hint}`;
}

/** What an action whose call failed with `err` says: "not sent" when no answer came at all. */
export function failureText(label, err) {
  return err instanceof ApiError && err.status === 0
    ? `${label} not sent: ${err.message}`
    : `${label} refused: ${err.message}`;
}

/**
 * One /v1 call; the answer's body and headers, or an ApiError with the API's own message (status
 * 0 when the server could not be reached: the browser's "Failed to fetch" said nothing of that).
 */
export async function call(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: { ...authHeader(), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch(() => {
    throw new ApiError(0, 'the server could not be reached; try again once the console says live');
  });
  const data = res.status === 204 ? null : await res.json().catch(() => null);
  if (!res.ok) {
    const first = data?.detail?.[0];
    const message = data?.error?.message ?? (first ? detailText(first) : `HTTP ${res.status}`);
    throw new ApiError(res.status, message);
  }
  return { data, headers: res.headers };
}

export const api = async (method, path, body) => (await call(method, path, body)).data;

/** A page of a /v1 list, its total (X-Total-Count) and its headers. */
export async function page(path) {
  const { data, headers } = await call('GET', path);
  return { items: data, total: Number(headers.get('X-Total-Count') ?? data.length), headers };
}

export const enc = encodeURIComponent;

/** A query string of the set values only. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

const listeners = new Set();

/** Subscribes to the change feed (charge-point and session events); returns the unsubscribe. */
export function onEvent(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

const resyncs = new Set();

/**
 * Subscribes to the feed coming back after it was cut (a restart of the server, the network), and
 * to the server's `health` events (it lost or found Redis or its database): the events of the gap
 * are lost, or what the server can tell changed, so a view reads afresh what it shows. Returns the
 * unsubscribe.
 */
export function onResync(fn) {
  resyncs.add(fn);
  return () => resyncs.delete(fn);
}

function dispatch(block) {
  const type = /^event: (.*)$/m.exec(block)?.[1];
  const data = /^data: (.*)$/m.exec(block)?.[1];
  if (!type || !data) return;
  let event;
  try {
    event = JSON.parse(data);
  } catch {
    return;
  }
  // the server lost or found Redis or its database: who it shows online, or whether it can read
  // at all, changed with no charger event; every view reads again what it shows
  if (type === 'health') for (const fn of resyncs) fn();
  else for (const fn of listeners) fn(event);
}

/**
 * GET /v1/events read with fetch (EventSource cannot send the Authorization header), reconnected
 * after a pause while `signal` is not aborted. `state(s)`: 'live', 'reconnecting', 'refused'.
 */
export async function listen(state, signal) {
  let cut = false;
  while (!signal.aborted) {
    try {
      const res = await fetch('/v1/events', { headers: authHeader(), signal });
      if (res.status === 401) {
        state('refused');
        return;
      }
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      state('live');
      // back after a cut: what changed meanwhile came as no event (chargers that went offline
      // while the server restarted were shown online until a reload)
      if (cut) for (const fn of resyncs) fn();
      cut = true;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        const blocks = buffer.split('\n\n');
        buffer = blocks.pop() ?? '';
        for (const b of blocks) dispatch(b);
      }
    } catch {
      if (signal.aborted) return;
    }
    state('reconnecting');
    await new Promise((r) => setTimeout(r, 2000));
  }
}
