// Roaming: the OCPI partners (GET /v1/partners) and their outbox queues (GET /v1/outbox/partners);
// the outbox rows of a partner, pending or dead (GET /v1/outbox), a dead letter sent again or
// discarded; commands sent to a partner CPO (POST /v1/partners/{id}/commands/{command}, GET
// /v1/commands; the CPO's locations we hold offered for its fields) and those partners sent our chargers (GET /v1/received-commands). Re-read every
// few seconds while shown: results arrive from partners, not from the event stream.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { api, enc, failureText, page, query } from './api.js';
import { fmtTime } from './format.js';
import { ErrorLine, Notice, Status, useLoad } from './ui.js';

const REFRESH_MS = 3000;
const RECENT = 20;
const party = (p) => `${p.country_code}-${p.party_id}`;
const go = (f) => {
  location.hash = `#/roaming${query(f)}`;
};

/** `reload` every REFRESH_MS while the tab is visible. */
function usePolling(reload) {
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void reload();
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
}

function Partners({ data, f }) {
  return html`<table class="list">
    <thead>
      <tr>
        <th>Partner</th>
        <th>Role</th>
        <th>State</th>
        <th>Waiting</th>
        <th>Dead letters</th>
        <th>Breaker</th>
        <th>Last sent</th>
        <th>Last error</th>
      </tr>
    </thead>
    <tbody data-testid="partners">
      ${data.partners.map((p) => {
        const q = data.queues.get(party(p));
        const show = (status) => go({ ...f, partner: p.id, status });
        return html`<tr data-testid=${`partner-${p.id}`}>
          <td data-label="Partner">${party(p)} <span class="muted">${p.id}</span></td>
          <td data-label="Role">${p.role} ${p.version ?? ''}</td>
          <td data-label="State"><${Status} status=${p.status} /></td>
          <td data-label="Waiting">
            <button class="link" data-testid="show-pending" onClick=${() => show('pending')}>${q?.pending ?? 0}</button>
          </td>
          <td data-label="Dead letters">
            <button class=${`link ${q?.dead ? 'bad-text' : ''}`} data-testid="show-dead" onClick=${() => show('dead')}>
              ${q?.dead ?? 0}
            </button>
          </td>
          <td data-label="Breaker">
            ${q ? (q.breaker === 'open' ? `open until ${fmtTime(q.open_until)}` : 'closed') : ''}
          </td>
          <td data-label="Last sent">${fmtTime(q?.last_sent_at)}</td>
          <td data-label="Last error">${lastError(q)}</td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

/**
 * A partner's last failure with its time, and whether sends went well since: the failure of an
 * outage over stays shown, but as past.
 */
function lastError(q) {
  if (!q?.last_error) return '';
  const when = q.last_failed_at ? ` (${fmtTime(q.last_failed_at)})` : '';
  const past = q.last_failed_at && q.last_sent_at && q.last_sent_at > q.last_failed_at;
  return `${q.last_error}${when}${past ? ', sent since' : ''}`;
}

/** A dead letter's Retry and Discard (asked twice: a discarded push is gone for good). */
function DeadLetterActions({ row, done }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const act = async (label, method, path, ok) => {
    setBusy(true);
    try {
      done({ ok: true, text: ok(await api(method, path)) });
    } catch (err) {
      done({ ok: false, text: failureText(`${label} of dead letter ${row.id}`, err) });
    } finally {
      setBusy(false);
      setAsking(false);
    }
  };
  const retry = () =>
    act('Retry', 'POST', `/v1/outbox/${row.id}/retry`, (r) =>
      r.superseded
        ? `Dead letter ${row.id} dropped: a newer change of ${row.object} is being sent instead`
        : `Dead letter ${row.id} (${row.object}) queued again for ${party(row.partner)}`,
    );
  const discard = () =>
    act('Discard', 'DELETE', `/v1/outbox/${row.id}`, () => `Dead letter ${row.id} (${row.object}) discarded`);
  if (asking)
    return html`<span class="actions">
      <span>Discard for good?</span>
      <button class="danger" disabled=${busy} data-testid="confirm-discard" onClick=${discard}>Discard</button>
      <button class="quiet" disabled=${busy} onClick=${() => setAsking(false)}>Keep</button>
    </span>`;
  return html`<span class="actions">
    <button disabled=${busy} data-testid="retry" onClick=${retry}>Retry</button>
    <button class="quiet" disabled=${busy} data-testid="discard" onClick=${() => setAsking(true)}>Discard</button>
  </span>`;
}

function Outbox({ partners, f, changed }) {
  const status = f.status ?? 'dead';
  const [notice, setNotice] = useState(null);
  const [{ data, error }, reload] = useLoad(
    () => page(`/v1/outbox${query({ status, partner_id: f.partner, limit: 100 })}`),
    [status, f.partner],
  );
  usePolling(reload);
  const done = (n) => {
    setNotice(n);
    void reload();
    changed();
  };
  return html`<section data-testid="outbox">
    <h2>Outbox</h2>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <select
        aria-label="outbox status"
        data-testid="outbox-status"
        value=${status}
        onChange=${(e) => go({ ...f, status: e.currentTarget.value })}
      >
        <option value="dead">dead letters</option>
        <option value="pending">waiting to be sent</option>
      </select>
      <select
        aria-label="partner"
        data-testid="outbox-partner"
        value=${f.partner ?? ''}
        onChange=${(e) => go({ ...f, partner: e.currentTarget.value || undefined })}
      >
        <option value="">every partner</option>
        ${partners.map((p) => html`<option value=${p.id}>${party(p)} (${p.role})</option>`)}
      </select>
    </form>
    <${Notice} notice=${notice} />
    <${ErrorLine} error=${error} />
    ${
      data &&
      data.total === 0 &&
      html`<p class="muted">${status === 'dead' ? 'No dead letter.' : 'Nothing waits to be sent.'}</p>`
    }
    ${data && data.total > data.items.length && html`<p class="muted">The first ${data.items.length} of ${data.total}.</p>`}
    <table class="list">
      <thead>
        <tr>
          <th>Partner</th>
          <th>Object</th>
          <th>Kind</th>
          <th>Attempts</th>
          <th>${status === 'dead' ? 'Failed' : 'Next attempt'}</th>
          <th>Last error</th>
          ${status === 'dead' && html`<th></th>`}
        </tr>
      </thead>
      <tbody data-testid="outbox-rows">
        ${data?.items.map(
          (r) =>
            html`<tr data-testid=${`outbox-${r.id}`} data-object=${r.object}>
              <td data-label="Partner">${party(r.partner)}</td>
              <td data-label="Object">${r.object}</td>
              <td data-label="Kind">${r.kind}</td>
              <td data-label="Attempts">${r.attempts}</td>
              <td data-label=${status === 'dead' ? 'Failed' : 'Next attempt'}>
                ${fmtTime(status === 'dead' ? r.updated_at : r.next_attempt_at)}
              </td>
              <td data-label="Last error">${r.last_error ?? ''}</td>
              ${
                status === 'dead' &&
                html`<td data-label="Action"><${DeadLetterActions} key=${r.id} row=${r} done=${done} /></td>`
              }
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

/** The fields the console asks for, per command (docs/OCPI.md "Commands": without response_url). */
const COMMANDS = {
  START_SESSION: ['token_uid', 'location_id', 'evse_uid', 'connector_id'],
  STOP_SESSION: ['session_id'],
  RESERVE_NOW: ['token_uid', 'expiry_date', 'reservation_id', 'location_id', 'evse_uid'],
  CANCEL_RESERVATION: ['reservation_id'],
  UNLOCK_CONNECTOR: ['location_id', 'evse_uid', 'connector_id'],
};
const OPTIONAL = new Set(['evse_uid', 'connector_id']);

/**
 * The commands and fields a CPO's version of commands has: 2.1.1 has no CANCEL_RESERVATION and
 * no `connector_id` in StartSession (the API refuses them, 422, before any call).
 */
const commandsFor = (version) => Object.keys(COMMANDS).filter((c) => version !== '2.1.1' || c !== 'CANCEL_RESERVATION');
const fieldsFor = (command, version) =>
  COMMANDS[command].filter((f) => !(version === '2.1.1' && command === 'START_SESSION' && f === 'connector_id'));
const LABELS = {
  token_uid: 'our token uid',
  location_id: 'their location id',
  evse_uid: 'their EVSE uid',
  connector_id: 'connector id',
  session_id: 'session id',
  expiry_date: 'reserved until',
  reservation_id: 'reservation id',
};

const isCpo = (p) => p.role === 'CPO' || (p.parties ?? []).some((x) => x.role === 'CPO');

/** The body of a command from the form's values: empty fields left out, the version's types. */
function fieldsOf(command, values, version) {
  const body = {};
  for (const name of fieldsFor(command, version)) {
    const v = (values[name] ?? '').trim();
    if (!v) continue;
    if (name === 'expiry_date') body[name] = new Date(v).toISOString();
    // 2.1.1 names a reservation by an integer, 2.2.1 by a string
    else if (name === 'reservation_id' && version === '2.1.1' && /^\d+$/.test(v)) body[name] = Number(v);
    else body[name] = v;
  }
  return body;
}

/** The outcome of a command as a word and a tone: the CPO's result, else its answer. */
function commandState(c) {
  if (c.error) return { text: 'not sent', tone: 'FAILED' };
  if (c.result) return { text: String(c.result.result), tone: c.result.result };
  if (c.response?.result && c.response.result !== 'ACCEPTED')
    return { text: String(c.response.result), tone: c.response.result };
  return { text: 'waiting for the result', tone: 'sent' };
}

/**
 * The locations we hold of the CPO partner `id` (GET /v1/partners/{id}/objects/locations, the
 * 1,000 changed last): what the form offers for its location, EVSE and connector fields.
 */
function useTheirLocations(id) {
  const [locations, setLocations] = useState([]);
  // read again when a place field takes the focus: a location the CPO pushed since shows (at most every 3 s)
  const [asked, setAsked] = useState(0);
  const readAt = useRef(0);
  useEffect(() => setLocations([]), [id]);
  useEffect(() => {
    if (!id) return undefined;
    let current = true;
    readAt.current = Date.now();
    page(`/v1/partners/${enc(id)}/objects/locations?limit=1000`)
      .then((got) => current && setLocations(got.items))
      .catch(() => undefined); // only suggestions: the fields take any id
    return () => {
      current = false;
    };
  }, [id, asked]);
  const refresh = () => {
    if (Date.now() - readAt.current >= REFRESH_MS) setAsked((n) => n + 1);
  };
  return [locations, refresh];
}

/** The suggestions of each field, narrowed by the location and EVSE already chosen. */
function suggestions(locations, values) {
  const location = locations.find((l) => l.id === values.location_id?.trim());
  const evses = location ? (location.evses ?? []) : locations.flatMap((l) => l.evses ?? []);
  const evse = evses.find((e) => e.uid === values.evse_uid?.trim());
  return {
    location_id: locations.map((l) => [l.id, [l.name, l.city].filter(Boolean).join(', ')]),
    evse_uid: evses.map((e) => [e.uid, [e.evse_id, e.status].filter(Boolean).join(' ')]),
    connector_id: (evse ? (evse.connectors ?? []) : []).map((c) => [c.id, c.standard ?? '']),
  };
}

function CommandForm({ partners, sent }) {
  const cpos = partners.filter(isCpo);
  const [partnerId, setPartnerId] = useState('');
  const [command, setCommand] = useState('START_SESSION');
  const [values, setValues] = useState({});
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState(null);
  const target = cpos.find((p) => p.id === partnerId) ?? cpos[0];
  const commands = commandsFor(target?.version);
  // a command the chosen CPO's version lacks falls back to the first it has
  const shown = commands.includes(command) ? command : (commands[0] ?? command);
  const [theirLocations, refreshTheirs] = useTheirLocations(target?.id);
  const offered = suggestions(theirLocations, values);
  if (cpos.length === 0) return html`<p class="muted">No CPO partner to send a command to.</p>`;
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    try {
      const c = await api(
        'POST',
        `/v1/partners/${enc(target.id)}/commands/${shown}`,
        fieldsOf(shown, values, target.version),
      );
      const answer = c.response?.result ?? '';
      setNotice({
        ok: answer === 'ACCEPTED',
        text: `${shown} to ${party(target)}: the CPO answered ${answer}${c.response?.message ? ` (${JSON.stringify(c.response.message)})` : ''}${answer === 'ACCEPTED' ? ', the result follows below' : ''}`,
      });
    } catch (err) {
      setNotice({ ok: false, text: failureText(`${shown} to ${party(target)}`, err) });
    } finally {
      setBusy(false);
      sent();
    }
  };
  return html`<form class="op-form card" onSubmit=${submit} data-testid="command-form">
    <label
      >CPO partner
      <select data-testid="command-partner" value=${target.id} onChange=${(e) => setPartnerId(e.currentTarget.value)}>
        ${cpos.map((p) => html`<option value=${p.id}>${party(p)} ${p.version ?? ''}</option>`)}
      </select>
    </label>
    <label
      >Command
      <select data-testid="command-name" value=${shown} onChange=${(e) => setCommand(e.currentTarget.value)}>
        ${commands.map((c) => html`<option value=${c}>${c}</option>`)}
      </select>
    </label>
    ${fieldsFor(shown, target.version).map(
      (name) =>
        html`<label
          >${LABELS[name]}${OPTIONAL.has(name) ? html` <span class="muted">(optional)</span>` : ''}
          <input
            name=${name}
            data-testid=${`command-${name}`}
            type=${name === 'expiry_date' ? 'datetime-local' : 'text'}
            required=${!OPTIONAL.has(name)}
            list=${offered[name] ? `their-${name}` : undefined}
            onFocus=${offered[name] ? refreshTheirs : undefined}
            value=${values[name] ?? ''}
            onInput=${(e) => setValues({ ...values, [name]: e.currentTarget.value })}
          />${
            offered[name] &&
            html`<datalist id=${`their-${name}`} data-testid=${`their-${name}`}>
              ${offered[name].map(([value, label]) => html`<option value=${value}>${label}</option>`)}
            </datalist>`
          }</label
        >`,
    )}
    <button type="submit" disabled=${busy} data-testid="command-send">Send ${shown}</button>
    <${Notice} notice=${notice} />
  </form>`;
}

function SentCommands({ data }) {
  if (data.items.length === 0) return html`<p class="muted">No command sent yet.</p>`;
  return html`<table class="list">
    <thead>
      <tr>
        <th>Sent</th>
        <th>Partner</th>
        <th>Command</th>
        <th>Answer</th>
        <th>Result</th>
        <th>Result at</th>
      </tr>
    </thead>
    <tbody data-testid="sent-commands">
      ${data.items.map((c) => {
        const state = commandState(c);
        return html`<tr data-testid=${`command-${c.uid}`}>
          <td data-label="Sent">${fmtTime(c.sent_at)}</td>
          <td data-label="Partner">${party(c.partner)}</td>
          <td data-label="Command">${c.command}</td>
          <td data-label="Answer">
            ${
              c.error
                ? html`<span class="bad-text">${c.error}</span>`
                : html`<${Status} status=${c.response?.result ?? '—'} />`
            }
          </td>
          <td data-label="Result" data-testid="result">
            <${Status}
              status=${state.tone}
            />${state.text !== state.tone ? html` <span class="muted">${state.text}</span>` : ''}
          </td>
          <td data-label="Result at">${fmtTime(c.result_at)}</td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

function ReceivedCommands({ data }) {
  if (data.items.length === 0) return html`<p class="muted">No partner command reached a charger yet.</p>`;
  // a result is queued for the partner, not known to have reached it: the outbox says that
  return html`<p class="muted">
      A result is queued for the partner when the charger answers; the Outbox shows whether it has reached the partner.
    </p>
    <table class="list">
      <thead>
        <tr>
          <th>Received</th>
          <th>Partner</th>
          <th>Command</th>
          <th>Charge point</th>
          <th>Charger answered</th>
          <th>Result</th>
        </tr>
      </thead>
      <tbody data-testid="received-commands">
        ${data.items.map(
          (c) =>
            html`<tr data-testid=${`received-${c.id}`}>
              <td data-label="Received">${fmtTime(c.created_at ?? c.updated_at)}</td>
              <td data-label="Partner">${party(c.partner)} <span class="muted">${c.version}</span></td>
              <td data-label="Command">${c.command}</td>
              <td data-label="Charge point">
                <a href=${`#/chargers/${enc(c.charge_point_id)}`}>${c.charge_point_id}</a>
              </td>
              <td data-label="Charger answered">${c.charger_status ?? 'waiting'}</td>
              <td data-label="Result">${c.result ? html`<${Status} status=${c.result} />` : ''}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}

function Commands({ partners }) {
  const [{ data, error }, reload] = useLoad(async () => {
    const [sent, received] = await Promise.all([
      page(`/v1/commands?limit=${RECENT}`),
      page(`/v1/received-commands?limit=${RECENT}`),
    ]);
    return { sent, received };
  }, []);
  usePolling(reload);
  return html`<section data-testid="commands">
    <h2>Commands</h2>
    <div class="grid">
      <div>
        <h3>Send a command to a CPO</h3>
        <${CommandForm} partners=${partners} sent=${() => void reload()} />
      </div>
      <div>
        <h3>
          Sent <span class="muted">${data ? `(latest ${data.sent.items.length} of ${data.sent.total})` : ''}</span>
        </h3>
        <${ErrorLine} error=${error} />
        ${data && html`<${SentCommands} data=${data.sent} />`}
      </div>
    </div>
    <h3>
      Received from partners, carried to our chargers
      <span class="muted"> ${data ? `(latest ${data.received.items.length} of ${data.received.total})` : ''}</span>
    </h3>
    ${data && html`<${ReceivedCommands} data=${data.received} />`}
  </section>`;
}

export function Roaming({ params }) {
  const f = { partner: params.get('partner') || undefined, status: params.get('status') || undefined };
  const [{ data, error }, reload] = useLoad(async () => {
    const [partners, queues] = await Promise.all([api('GET', '/v1/partners'), api('GET', '/v1/outbox/partners')]);
    return { partners, queues: new Map(queues.map((q) => [party(q.partner), q])) };
  }, []);
  usePolling(reload);
  return html`<section>
    <h1>Roaming</h1>
    <button class="quiet" onClick=${() => void reload()}>Refresh</button>
    <${ErrorLine} error=${error} />
    ${data && data.partners.length === 0 && html`<p class="muted">No partner registered.</p>`}
    ${data && html`<${Partners} data=${data} f=${f} />`}
    ${data && html`<${Outbox} partners=${data.partners} f=${f} changed=${() => void reload()} />`}
    ${data && html`<${Commands} partners=${data.partners} />`}
  </section>`;
}
