// The operator console: a sign-in for the key, then the fleet overview, the charger list, a page
// per charger, the sessions, roaming (partners, outbox, commands), our tariffs and the CDRs, each a
// hash route (#/chargers?q=...).
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { ApiError, api, auth, listen } from './api.js';
import { Overview } from './overview.js';
import { ChargerList } from './chargers.js';
import { ChargerPage } from './charger.js';
import { Sessions } from './sessions.js';
import { SessionPage } from './session.js';
import { Roaming } from './roaming.js';
import { Tariffs } from './tariffs.js';
import { Cdrs } from './cdrs.js';

/** The route of a location hash: its path parts and its query. */
function parseHash(hash) {
  const [path, search] = hash.replace(/^#\/?/, '').split('?');
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(search ?? '') };
}

function useRoute() {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return parseHash(hash);
}

function SignIn({ onSignedIn, refused }) {
  const [error, setError] = useState(refused ? 'The key was refused: sign in again.' : '');
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    const input = e.currentTarget.elements.key;
    const key = input.value.trim();
    if (!key) return;
    setBusy(true);
    auth.set(key);
    try {
      // a cheap call that needs the key
      await api('GET', '/v1/fleet?alerts=0');
      input.value = '';
      onSignedIn();
    } catch (err) {
      auth.clear();
      setError(
        err instanceof ApiError && err.status === 401 ? 'This key is not valid.' : `Could not sign in: ${err.message}`,
      );
    } finally {
      setBusy(false);
    }
  };
  return html`<main class="signin">
    <form onSubmit=${submit} data-testid="signin" class="card">
      <h1>Operator console</h1>
      <label for="key">Operator API key</label>
      <input id="key" name="key" type="password" autocomplete="off" required autofocus aria-label="operator API key" />
      <button type="submit" disabled=${busy}>Sign in</button>
      ${error && html`<p class="notice err" role="alert" data-testid="signin-error">${error}</p>`}
      <p class="muted">The key is kept for this tab only and sent to this server alone.</p>
    </form>
  </main>`;
}

const TABS = [
  ['', 'Overview'],
  ['chargers', 'Chargers'],
  ['sessions', 'Sessions'],
  ['roaming', 'Roaming'],
  ['tariffs', 'Tariffs'],
  ['cdrs', 'CDRs'],
];

/** The name of the screen at `parts` (the page's title says it, and so does the heading focused). */
function screenName([first, second]) {
  if (first === 'chargers' && second) return `Charger ${second}`;
  if (first === 'sessions' && second) return `Session ${second}`;
  return (TABS.find(([path]) => path === (first ?? '')) ?? TABS[0])[1];
}

/**
 * On a move to another screen (not a change of its filters): the page's title names it, and the
 * focus goes to its heading, so that a keyboard or screen reader user starts there rather than
 * on the link that was followed (or on the page's body).
 */
function useScreenChange(parts, signedIn) {
  const path = signedIn ? parts.join('/') : null;
  useEffect(() => {
    // the sign-in form keeps its focus on the key
    if (path === null) {
      document.title = 'Sign in · Operator console';
      return undefined;
    }
    document.title = `${screenName(parts)} · Operator console`;
    const frame = setTimeout(() => {
      const heading = document.querySelector('main h1');
      if (!heading) return;
      heading.setAttribute('tabindex', '-1');
      heading.focus({ preventScroll: true });
    });
    return () => clearTimeout(frame);
  }, [path]);
}

function Screen({ route }) {
  const [first, second] = route.parts;
  // keyed by id: another charger's page starts afresh, without the last one's results
  if (first === 'chargers' && second) return html`<${ChargerPage} key=${second} id=${second} />`;
  if (first === 'chargers') return html`<${ChargerList} params=${route.params} />`;
  if (first === 'sessions' && second) return html`<${SessionPage} key=${second} id=${second} />`;
  if (first === 'sessions') return html`<${Sessions} params=${route.params} />`;
  if (first === 'roaming') return html`<${Roaming} params=${route.params} />`;
  if (first === 'tariffs') return html`<${Tariffs} params=${route.params} />`;
  if (first === 'cdrs') return html`<${Cdrs} params=${route.params} />`;
  return html`<${Overview} />`;
}

function App() {
  const [signedIn, setSignedIn] = useState(auth.key !== '');
  const [refused, setRefused] = useState(false);
  const [live, setLive] = useState('connecting');
  const route = useRoute();
  useScreenChange(route.parts, signedIn);

  useEffect(() => {
    if (!signedIn) return undefined;
    const stop = new AbortController();
    void listen((s) => {
      if (s === 'refused') {
        auth.clear();
        setRefused(true);
        setSignedIn(false);
      }
      setLive(s);
    }, stop.signal);
    return () => stop.abort();
  }, [signedIn]);

  if (!signedIn)
    return html`<${SignIn} refused=${refused} onSignedIn=${() => (setRefused(false), setSignedIn(true))} />`;
  const current = route.parts[0] ?? '';
  const signOut = () => {
    auth.clear();
    setSignedIn(false);
  };
  return html`<header class="top">
      <nav aria-label="screens">
        ${TABS.map(
          ([path, label]) =>
            html`<a
              href=${`#/${path}`}
              class=${current === path ? 'current' : ''}
              data-testid=${`nav-${path || 'overview'}`}
              >${label}</a
            >`,
        )}
      </nav>
      <span class=${`live live-${live}`} role="status" data-testid="live">${live}</span>
      <button class="quiet" onClick=${signOut} data-testid="sign-out">Sign out</button>
    </header>
    <main><${Screen} route=${route} /></main>`;
}

render(html`<${App} />`, document.getElementById('app'));
