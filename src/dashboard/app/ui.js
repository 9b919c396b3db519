// Small pieces the screens share.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { tone } from './format.js';

/** A status as a coloured chip, with its error code when it has one. */
export function Status({ status, error, testid }) {
  const code = error && error !== 'NoError' ? error : '';
  return html`<span class=${`chip ${tone(status, code)}`} data-testid=${testid} data-status=${status}
    >${status}${code && html` <b class="code">${code}</b>`}</span
  >`;
}

/** A charger's own words for a connector's fault (1.6 vendorId, vendorErrorCode and info), when it gave them. */
export function FaultText({ c }) {
  // a vendor's code means something with its vendor: "ABB E-402: RCD tripped"
  const code = [c.vendor_id, c.vendor_error_code].filter(Boolean).join(' ');
  const text = [code, c.info].filter(Boolean).join(': ');
  return text ? html`<span class="fault-text" data-testid="fault-text">${` ${text}`}</span>` : null;
}

/**
 * While Redis cannot be reached (cluster mode), a list's, a charger's and the overview's `online`
 * is what the process that answered knows (`online_scope`, X-Online-Scope): said above them.
 */
export function OnlineScopeNote({ scope }) {
  if (!scope || scope === 'cluster') return null;
  const text =
    'Redis cannot be reached: only the chargers connected to the process that answered show online; ' +
    'the others show offline until it is back.';
  return html`<p class="notice pending" role="status" data-testid="online-scope">${text}</p>`;
}

/** The outcome of an action: green when it went through, red when it did not. */
export function Notice({ notice }) {
  if (!notice) return null;
  const tone = notice.pending ? 'pending' : notice.ok ? 'ok' : 'err';
  return html`<p class=${`notice ${tone}`} role="status" data-testid="notice">${notice.text}</p>`;
}

/**
 * One action at a time: `once(fn)` runs `fn` unless one is in flight (a double click on a slow
 * network sent a command twice), and `busy` is true meanwhile, to disable its buttons.
 */
export function useOneAtATime() {
  const [busy, setBusy] = useState(false);
  const inFlight = useRef(false);
  const once = async (fn) => {
    if (inFlight.current) return;
    inFlight.current = true;
    setBusy(true);
    try {
      await fn();
    } finally {
      inFlight.current = false;
      setBusy(false);
    }
  };
  return [busy, once];
}

/**
 * A loader run on mount and whenever `deps` change; `reload` runs it again. `reload` is the same
 * function for the component's life and always runs the loader of the latest render, so a timer or
 * a subscription set up once never reloads what the page showed when it was set up.
 */
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: undefined, error: undefined });
  const seq = useRef(0);
  const latest = useRef(load);
  latest.current = load;
  const run = useRef(async () => {
    const mine = ++seq.current;
    try {
      const data = await latest.current();
      if (mine === seq.current) setState({ data, error: undefined });
    } catch (err) {
      if (mine === seq.current) setState((s) => ({ data: s.data, error: err }));
    }
  }).current;
  useEffect(() => {
    void run();
  }, deps);
  return [state, run];
}

/**
 * A view that shows `online` is read again every 30 s with no event. The event stream's `health`
 * event says when the process that serves it lost or found Redis (api.js), but behind a load
 * balancer the reads may be answered by another process (cluster mode). Every 5 s while its
 * `online` is this process's only (`scope` this_process), so that its note clears once Redis is
 * back.
 */
export function useOnlineReload(scope, reload) {
  const ms = scope === 'this_process' ? 5000 : 30_000;
  useEffect(() => {
    const timer = setInterval(() => void reload(), ms);
    return () => clearInterval(timer);
  }, [ms]);
}

/**
 * `fn` at most once per `ms` per key, with the arguments of the last call: by default `ms` after
 * the first call of a burst (events keep a view fresh while they keep coming); with `restart`, `ms`
 * after the last call (a search runs once typing pauses).
 */
export function useDebounced(fn, ms, { restart = false } = {}) {
  const timers = useRef(new Map());
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => () => timers.current.forEach((t) => clearTimeout(t.timer)), []);
  return (key, ...args) => {
    const pending = timers.current.get(key);
    if (pending && !restart) {
      pending.args = args;
      return;
    }
    if (pending) clearTimeout(pending.timer);
    const entry = { args, timer: undefined };
    entry.timer = setTimeout(() => {
      timers.current.delete(key);
      latest.current(key, ...entry.args);
    }, ms);
    timers.current.set(key, entry);
  };
}

/**
 * A field's value that the user edits and that follows `value` whenever `value` itself changes
 * (the hash moved on). Synchronous on render: an effect would run after the first paint and could
 * wipe what was typed in between.
 */
export function useFollowed(value) {
  const [, redraw] = useState(0);
  const held = useRef({ from: value, text: value });
  if (held.current.from !== value) held.current = { from: value, text: value };
  const set = (text) => {
    held.current = { from: held.current.from, text };
    redraw((n) => n + 1);
  };
  return [held.current.text, set];
}

export function ErrorLine({ error }) {
  return error ? html`<p class="notice err" role="alert">Could not load: ${error.message}</p>` : null;
}

/**
 * The range a list page shows: `11–20 of 61`; `empty` when nothing matches; and for an offset
 * past the last item (a link kept from a longer list) how many there are, not `10001–10000`.
 */
export function rangeText(offset, shown, total, empty) {
  if (total === 0) return empty;
  if (shown === 0) return `Nothing from ${offset + 1}: ${total} in all.`;
  return `${offset + 1}–${offset + shown} of ${total}`;
}
