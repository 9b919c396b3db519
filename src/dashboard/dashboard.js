// The dashboard only uses the public /v1 API (GET /v1/charge-points, GET /v1/sessions,
// POST .../remote-start|remote-stop and the operations, GET .../events, PUT|DELETE .../evses/{n}) and its event stream GET /v1/events. It is a file of its
// own so that the page's Content-Security-Policy can refuse inline scripts.
const KEY = 'csms-api-key';

// The operator key lives for the tab's session only (sessionStorage), not on disk for every
// script of this origin to read later (docs/SECURITY.md). A key an older version left in localStorage
// is moved over once and removed there.
const legacy = localStorage.getItem(KEY);
if (legacy !== null) {
  sessionStorage.setItem(KEY, legacy);
  localStorage.removeItem(KEY);
}
const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c ?? '')));
  return e;
};
const key = () => sessionStorage.getItem(KEY) || '';
const headers = () => (key() ? { Authorization: `Bearer ${key()}` } : {});

async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: { ...headers(), ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = res.status === 204 ? null : await res.json().catch(() => null);
  if (!res.ok) throw new Error(data?.error?.message ?? data?.detail?.[0]?.msg ?? `HTTP ${res.status}`);
  return data;
}

function say(text) {
  $('message').textContent = text;
}

const fmtTime = (t) => (t ? new Date(t).toLocaleString() : '');
const kwh = (wh) => (wh / 1000).toFixed(3);

function renderChargePoints(items) {
  const body = $('charge-points');
  body.replaceChildren(
    ...items.map((cp) => {
      const online = cp.online;
      const tx = cp.active_transactions[cp.active_transactions.length - 1];
      const connectors = cp.connectors
        .filter((c) => c.connector_id > 0)
        .map((c) => `${c.evse_id}/${c.connector_id}: ${c.status}`)
        .join(', ');
      return el(
        'tr',
        { 'data-testid': `cp-${cp.id}`, 'data-online': online ? 'true' : 'false' },
        el('td', {}, el('button', { class: 'link', 'data-testid': 'open', onclick: () => openCharger(cp.id) }, cp.id)),
        el('td', {}, cp.protocol),
        el(
          'td',
          {},
          el(
            'span',
            { class: `badge ${online ? 'online' : 'offline'}`, 'data-testid': 'online' },
            online ? 'online' : 'offline',
          ),
        ),
        el('td', { 'data-testid': 'connectors' }, connectors || el('span', { class: 'muted' }, 'none reported')),
        el('td', {}, cp.boot ? `${cp.boot.vendor} ${cp.boot.model}` : el('span', { class: 'muted' }, 'not booted')),
        el('td', {}, tx ?? ''),
        el('td', { 'data-testid': 'evse-links' }, evseLinks(cp)),
        el(
          'td',
          {},
          el(
            'button',
            { 'data-testid': 'remote-start', disabled: !online, onclick: () => remoteStart(cp.id) },
            'Remote start',
          ),
          ' ',
          el(
            'button',
            { 'data-testid': 'remote-stop', disabled: !online || !tx, onclick: () => remoteStop(cp.id) },
            'Remote stop',
          ),
        ),
      );
    }),
  );
}

// The EVSE links of a charger (docs/ROAMING.md), each with an unlink button; the form that adds
// one is outside the table (#link-form), which is rebuilt on every refresh.
function evseLinks(cp) {
  return el(
    'div',
    {},
    ...(cp.evse_links ?? []).map((l) =>
      el(
        'div',
        { 'data-testid': `evse-link-${l.evse_number}` },
        `${l.evse_number} → ${l.location_id} / ${l.evse_uid} `,
        el('button', { 'data-testid': 'unlink', onclick: () => unlink(cp.id, l.evse_number) }, 'Unlink'),
      ),
    ),
  );
}

async function linkEvse(event) {
  event.preventDefault();
  const f = new FormData(event.target);
  const id = String(f.get('charge_point_id'));
  const n = Number(f.get('evse_number'));
  try {
    await api('PUT', `/v1/charge-points/${encodeURIComponent(id)}/evses/${n}`, {
      location_id: String(f.get('location_id')),
      evse_uid: String(f.get('evse_uid')),
    });
    say(`EVSE ${n} of ${id} linked`);
    refreshSoon();
  } catch (err) {
    say(`Link refused: ${err.message}`);
  }
}

async function unlink(id, n) {
  try {
    await api('DELETE', `/v1/charge-points/${encodeURIComponent(id)}/evses/${n}`);
    say(`EVSE ${n} of ${id} unlinked`);
    refreshSoon();
  } catch (err) {
    say(`Unlink refused: ${err.message}`);
  }
}

// a roamed session's price: the CDR's total once it ended, its running cost before (marked ~)
function cost(c) {
  if (!c) return '';
  const amount = `${c.currency} ${(c.incl_vat ?? c.excl_vat).toFixed(2)}`;
  return c.final ? amount : `~${amount}`;
}

function renderSessions(items) {
  $('sessions').replaceChildren(
    ...items.map((s) =>
      el(
        'tr',
        { 'data-testid': `session-${s.charge_point_id}`, 'data-status': s.status },
        el('td', {}, s.charge_point_id),
        el('td', {}, s.transaction_id),
        el('td', {}, s.id_tag ?? ''),
        el('td', {}, el('span', { class: `badge ${s.status}` }, s.status)),
        el('td', {}, fmtTime(s.started_at)),
        el('td', {}, fmtTime(s.stopped_at)),
        el('td', { 'data-testid': 'energy' }, kwh(s.energy_wh)),
        el('td', { 'data-testid': 'cost', title: s.cost ? `excl. VAT ${s.cost.excl_vat}` : '' }, cost(s.cost)),
      ),
    ),
  );
}

async function refresh() {
  try {
    const [cps, sessions] = await Promise.all([
      api('GET', '/v1/charge-points?limit=200'),
      api('GET', '/v1/sessions?limit=50'),
    ]);
    renderChargePoints(cps);
    renderSessions(sessions);
  } catch (err) {
    say(`Could not load: ${err.message}`);
  }
}

let pending;
function refreshSoon() {
  clearTimeout(pending);
  pending = setTimeout(() => {
    refresh();
    renderCharger(false);
  }, 150);
}

async function remoteStart(id) {
  const idTag = prompt('Token (id tag) to start the session for', 'OPERATOR');
  if (!idTag) return;
  try {
    const res = await api('POST', `/v1/charge-points/${encodeURIComponent(id)}/remote-start`, { id_tag: idTag });
    say(`Remote start sent to ${id} (${res.command_status})`);
  } catch (err) {
    say(`Remote start failed: ${err.message}`);
  }
}

async function remoteStop(id) {
  try {
    const res = await api('POST', `/v1/charge-points/${encodeURIComponent(id)}/remote-stop`, {});
    say(`Remote stop sent to ${id} for transaction ${res.transaction_id}`);
  } catch (err) {
    say(`Remote stop failed: ${err.message}`);
  }
}

// The operations of docs/CSMS.md "Operations": the versions that have each, and an example body.
const OPERATIONS = {
  'change-availability': [['ocpp1.6', 'ocpp2.0.1'], { operative: false, evse_id: 1 }],
  reset: [['ocpp1.6', 'ocpp2.0.1'], { type: 'soft' }],
  'clear-cache': [['ocpp1.6', 'ocpp2.0.1'], {}],
  unlock: [['ocpp1.6', 'ocpp2.0.1'], { evse_id: 1 }],
  trigger: [['ocpp1.6', 'ocpp2.0.1'], { message: 'StatusNotification' }],
  'get-configuration': [['ocpp1.6'], { keys: [] }],
  'change-configuration': [['ocpp1.6'], { key: 'HeartbeatInterval', value: '300' }],
  'get-variables': [['ocpp2.0.1'], { variables: [{ component: 'OCPPCommCtrlr', variable: 'HeartbeatInterval' }] }],
  'set-variables': [
    ['ocpp2.0.1'],
    { variables: [{ component: 'OCPPCommCtrlr', variable: 'HeartbeatInterval', value: '300' }] },
  ],
  'get-local-list-version': [['ocpp1.6', 'ocpp2.0.1'], {}],
  'data-transfer': [['ocpp1.6', 'ocpp2.0.1'], { vendor_id: 'com.example', message_id: 'ping' }],
  'update-firmware': [['ocpp1.6', 'ocpp2.0.1'], { location: 'https://firmware.example/1.0.bin' }],
  'upload-log': [['ocpp1.6', 'ocpp2.0.1'], { location: 'https://logs.example/upload', log_type: 'diagnostics' }],
};
let charger; // the id of the charger whose panel is open

async function openCharger(id) {
  charger = id;
  $('charger').hidden = false;
  $('op-result').textContent = '';
  await renderCharger(true);
  $('charger').scrollIntoView();
}

async function renderCharger(fresh) {
  if (!charger) return;
  const id = encodeURIComponent(charger);
  try {
    const [cp, events] = await Promise.all([
      api('GET', `/v1/charge-points/${id}`),
      api('GET', `/v1/charge-points/${id}/events?limit=20`),
    ]);
    $('charger-title').textContent = `${cp.id} (${cp.protocol}, ${cp.online ? 'online' : 'offline'})`;
    const ops = Object.entries(cp.operations ?? {}).map(([name, o]) => `${name}: ${o.status}`);
    $('charger-status').textContent = ops.length
      ? ops.join(' · ')
      : 'no firmware, diagnostics or log operation reported';
    if (fresh) {
      const names = Object.keys(OPERATIONS).filter((n) => OPERATIONS[n][0].includes(cp.protocol));
      $('op-select').replaceChildren(...names.map((n) => el('option', { value: n }, n)));
      $('op-body').value = JSON.stringify(OPERATIONS[names[0]][1]);
    }
    $('charger-commands').replaceChildren(
      ...cp.commands
        .slice()
        .reverse()
        .map((c) => el('li', {}, `${fmtTime(c.updated_at)} ${c.kind}: ${c.status}${c.detail ? ` (${c.detail})` : ''}`)),
    );
    $('charger-events').replaceChildren(
      ...events.map((e) => el('li', { class: e.severity }, `${fmtTime(e.timestamp)} [${e.severity}] ${e.summary}`)),
    );
  } catch (err) {
    say(`Could not load ${charger}: ${err.message}`);
  }
}

async function runOperation(event) {
  event.preventDefault();
  const name = $('op-select').value;
  let body;
  try {
    body = JSON.parse($('op-body').value || '{}');
  } catch {
    say('The body is not JSON');
    return;
  }
  $('op-result').textContent = `${name}: sending…`;
  try {
    const res = await api('POST', `/v1/charge-points/${encodeURIComponent(charger)}/${name}`, body);
    const answer = res.answered ? res.command_status : `${res.command_status} (no answer yet)`;
    const reply = res.reply === undefined ? '' : `\n${JSON.stringify(res.reply, null, 2)}`;
    $('op-result').textContent = `${name}: ${answer}${res.detail ? ` - ${res.detail}` : ''}${reply}`;
  } catch (err) {
    $('op-result').textContent = `${name} refused: ${err.message}`;
  }
  renderCharger(false);
}

$('op-select').addEventListener('change', () => {
  $('op-body').value = JSON.stringify(OPERATIONS[$('op-select').value][1]);
});
$('op-form').addEventListener('submit', runOperation);

/** Server-sent events read with fetch, since EventSource cannot send the Authorization header. */
async function listen() {
  for (;;) {
    try {
      const res = await fetch('/v1/events', { headers: headers() });
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      $('live').textContent = 'live';
      refreshSoon();
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        const parts = buffer.split('\n\n');
        buffer = parts.pop() ?? '';
        if (parts.some((p) => p.includes('data:'))) refreshSoon();
      }
    } catch (err) {
      say(`Live updates interrupted: ${err.message}`);
    }
    $('live').textContent = 'reconnecting…';
    await new Promise((r) => setTimeout(r, 2000));
  }
}

$('link-form').addEventListener('submit', linkEvse);
$('key-form').addEventListener('submit', (e) => {
  e.preventDefault();
  sessionStorage.setItem(KEY, $('api-key').value);
  $('api-key').value = '';
  say('');
  refresh();
});

refresh();
listen();
