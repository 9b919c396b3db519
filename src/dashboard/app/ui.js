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

/** The outcome of an action: green when it went through, red when it did not. */
export function Notice({ notice }) {
  if (!notice) return null;
  return html`<p class=${`notice ${notice.ok ? 'ok' : 'err'}`} role="status" data-testid="notice">${notice.text}</p>`;
}

/** A loader run on mount and whenever `deps` change; `reload` runs it again. */
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: undefined, error: undefined });
  const seq = useRef(0);
  const run = async () => {
    const mine = ++seq.current;
    try {
      const data = await load();
      if (mine === seq.current) setState({ data, error: undefined });
    } catch (err) {
      if (mine === seq.current) setState((s) => ({ data: s.data, error: err }));
    }
  };
  useEffect(() => {
    void run();
  }, deps);
  return [state, run];
}

/**
 * `fn` at most once per `ms` per key, called when the pause ends with the arguments of the last
 * call in it (typing "FL-7321" searches for "FL-7321", not for the "F" that started the pause).
 */
export function useDebounced(fn, ms) {
  const timers = useRef(new Map());
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => () => timers.current.forEach((t) => clearTimeout(t.timer)), []);
  return (key, ...args) => {
    const pending = timers.current.get(key);
    if (pending) {
      pending.args = args;
      return;
    }
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
