// A charger's page: what it said at boot, its connectors (status and error code), the sessions,
// the commands and their answers, the operations, the event log and its OCPI EVSE links. An
// event about this charger re-reads it (and its sessions), nothing more.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { ApiError, api, call, enc, failureText, onEvent, onResync, page, query } from './api.js';
import { fmtDuration, fmtKwh, fmtTime, sessionDurationMs, fmtCost, tone } from './format.js';
import {
  ErrorLine,
  FaultText,
  Notice,
  OnlineScopeNote,
  Status,
  useDebounced,
  useLoad,
  useOneAtATime,
  useOnlineReload,
} from './ui.js';
import { OPERATIONS, accepted, changesCharger, exampleOf, firstRead, operationsFor } from './operations.js';

const FINAL = (s) => !['queued', 'sent'].includes(s);

/** The stored reply of one of the charger's commands (GET /v1/charge-points/{id}/commands/{command_id}). */
const replyOf = async (cpId, commandId) =>
  (await api('GET', `/v1/charge-points/${enc(cpId)}/commands/${enc(commandId)}`)).reply;

const replyText = (reply) => (reply === undefined ? '' : `\n${JSON.stringify(reply, null, 2)}`);

/**
 * What an operation's answer says: the charger's answer (or that it has not answered yet), the
 * detail, and what the operation adds (the reservation's id, a generated password while it may
 * be used, the reply). A sync of the local list answers its updates, each a command of its own.
 */
function resultOf(name, res) {
  if (name === 'sync-local-list') {
    if (res.in_sync) return { ok: true, text: `${name}: the charger holds the list already; nothing sent` };
    const open = res.commands.find((c) => !c.answered);
    const answers = res.commands.map(
      (c) =>
        `${c.answered ? c.command_status : `${c.command_status} (no answer yet)`}${c.detail ? ` - ${c.detail}` : ''}`,
    );
    return {
      ok: !open && res.commands.every((c) => accepted(c.command_status)),
      pending: open !== undefined,
      ...(open ? { command_id: open.command_id, name } : {}),
      text: `${name}: a ${res.update} update of ${res.changes} id tag(s): ${answers.join('; ')}`,
    };
  }
  const answer = res.answered ? res.command_status : `${res.command_status} (no answer yet)`;
  let extra = '';
  // the id of a reservation the charger refused names none: shown while it may hold, or does
  if (res.reservation_id !== undefined && (!res.answered || accepted(res.command_status)))
    extra += `\nreservation id: ${res.reservation_id}`;
  // a generated password is shown this once, and only while it may become the charger's
  if (res.password && res.password_state !== 'discarded') extra += `\nnew password (shown once): ${res.password}`;
  if (res.password_state === 'discarded') extra += '\nthe new password was not taken: the old one stays';
  else if (res.password_state) extra += `\npassword state: ${res.password_state}`;
  return {
    ok: res.answered && accepted(res.command_status),
    // not answered yet: neither green nor red until the charger's outcome comes
    pending: !res.answered,
    ...(res.answered ? {} : { command_id: res.command_id, name }),
    // the detail of a call still sent is its action, which the name says already
    text: `${name}: ${answer}${res.detail && res.answered ? ` - ${res.detail}` : ''}${extra}${replyText(res.reply)}`,
  };
}

// what a charger told of its hardware at boot, one row each it gave
const HARDWARE = [
  ['charge_box_serial_number', 'Charge box serial'],
  ['meter_type', 'Meter type'],
  ['meter_serial_number', 'Meter serial number'],
  ['iccid', 'SIM ICCID'],
  ['imsi', 'SIM IMSI'],
];
const hardwareRows = (h) => HARDWARE.filter(([k]) => h?.[k]).map(([k, label]) => [label, h[k]]);

function Facts({ cp }) {
  const b = cp.boot;
  const rows = [
    ['Protocol', cp.protocol],
    ['Vendor / model', b ? `${b.vendor} ${b.model}` : 'not booted'],
    ['Serial number', b?.serial_number ?? ''],
    ...hardwareRows(b?.hardware),
    ['Firmware', b?.firmware_version ?? ''],
    ['Booted', fmtTime(b?.booted_at)],
    ['Registration', cp.registration ?? 'not booted'],
    ['Boot policy', cp.boot_policy ?? 'default'],
    ['Last seen', cp.last_seen ? fmtTime(cp.last_seen) : 'never'],
    ['Registered', fmtTime(cp.created_at)],
    [
      'Password',
      cp.password.pending_since
        ? `change pending since ${fmtTime(cp.password.pending_since)}`
        : cp.password.changed_at
          ? `changed ${fmtTime(cp.password.changed_at)}`
          : 'as registered',
    ],
    ['OCPP URL', cp.ocpp_url],
  ];
  const ops = Object.entries(cp.operations ?? {});
  return html`<dl class="facts" data-testid="facts">
    ${rows.map(
      ([k, v]) =>
        html`<dt>${k}</dt>
          <dd>${v}</dd>`,
    )}
    <dt>Operations</dt>
    <dd data-testid="charger-status">
      ${ops.length ? ops.map(([n, o]) => `${n}: ${o.status}`).join(' · ') : 'no firmware, diagnostics or log operation reported'}
    </dd>
  </dl>`;
}

/**
 * The connectors, each with remote start (not on a faulted one or a faulted charger, one whose
 * EVSE runs a transaction, nor while offline), the charger's own status when it reported one (1.6
 * connector 0: a fault of the whole charger shows here), and the open transactions' stop. An
 * error code beside Available is a warning (1.6 4.9: WeakSignal, HighTemperature): the connector
 * takes a start, as the charger would.
 */
function Connectors({ cp, act, busy }) {
  const [idTag, setIdTag] = useState('OPERATOR');
  const connectors = cp.connectors.filter((c) => c.connector_id > 0);
  const whole = cp.connectors.find((c) => c.evse_id === 0 && c.connector_id === 0);
  // an open transaction on its EVSE, or a 1.6 status of a connector in one (2.0.1 Occupied is also
  // a plugged-in car waiting for a start, which is what a remote start is for)
  const charging = (c) =>
    cp.open_transactions.some((t) => t.evse_id === c.evse_id) ||
    ['Charging', 'SuspendedEV', 'SuspendedEVSE', 'Finishing'].includes(c.status);
  const faultedOne = (c) => c.status === 'Faulted' || (!cp.online && c.last_reported_status === 'Faulted');
  const faulted = (c) => faultedOne(c) || (whole !== undefined && faultedOne(whole));
  // a remote start queued or sent and not answered yet: another click queued another start, each
  // sent once the one before it had timed out
  const startWaits = cp.commands.some((x) => x.kind === 'start' && !FINAL(x.status));
  // why Start cannot be pressed, shown beside it (a tooltip only reached a mouse)
  const whyNoStart = (c) =>
    faultedOne(c)
      ? 'the connector is faulted'
      : faulted(c)
        ? 'the charger is faulted'
        : charging(c)
          ? 'a transaction runs on its EVSE'
          : !cp.online
            ? 'the charger is offline'
            : startWaits
              ? "a remote start waits for the charger's answer"
              : !idTag.trim()
                ? 'enter the token to start with'
                : '';
  // the transaction whose stop is being asked for: a stop is sent at the second click, as an
  // operation that changes the charger is (one click ended a driver's charge)
  const [stopping, setStopping] = useState(null);
  return html`<div>
    <label class="inline"
      >Token for a remote start
      <input
        value=${idTag}
        maxlength=${cp.protocol === 'ocpp2.0.1' ? 36 : 20}
        data-testid="id-tag"
        aria-label="token (id tag)"
        onInput=${(e) => setIdTag(e.currentTarget.value)}
      />
    </label>
    ${
      whole &&
      html`<p data-testid="charger-level">
        The whole charger:
        <${Status} status=${whole.status} error=${whole.error_code} testid="charger-level-status" /><${FaultText}
          c=${whole}
        />
        <span class="muted" title=${SINCE}>${` since ${fmtTime(whole.updated_at)}`}</span>
      </p>`
    }
    <ul class="connectors" data-testid="connectors">
      ${connectors.length === 0 && html`<li class="muted">No connector reported yet.</li>`}
      ${connectors.map((c) => {
        const why = whyNoStart(c);
        return html`<li data-testid=${`connector-${c.evse_id}-${c.connector_id}`}>
          <span>EVSE ${c.evse_id} / connector ${c.connector_id}</span>
          <${Status} status=${c.status} error=${c.error_code} testid="status" /><${FaultText} c=${c} />
          ${c.last_reported_status && html`<span class="muted"> last reported ${c.last_reported_status}</span>`}
          <span class="muted" title=${SINCE}>${` since ${fmtTime(c.updated_at)}`}</span>
          <${ReservedFor} cp=${cp} evse=${c.evse_id} />
          <button
            data-testid="remote-start"
            disabled=${busy || why !== ''}
            onClick=${() => act('Remote start', 'POST', 'remote-start', { id_tag: idTag, evse_id: c.evse_id, ...(cp.protocol === 'ocpp2.0.1' ? {} : { connector_id: c.connector_id }) })}
          >
            Start
          </button>
          ${why && html`<span class="muted" data-testid="start-why"> ${why}</span>`}
        </li>`;
      })}
    </ul>
    ${cp.open_transactions.map(
      ({ transaction_id: t, evse_id: e }) =>
        html`<p data-testid=${`transaction-${t}`}>
          Transaction ${t}${e > 0 ? ` on EVSE ${e}` : ''}
          ${
            stopping === t
              ? html`<span class="actions" data-testid="stop-confirm">
                  Stop transaction ${t} on ${cp.id}${e > 0 ? ` EVSE ${e}` : ''}? The driver's charge ends.
                  <button
                    class="danger"
                    data-testid="stop-send"
                    disabled=${busy || !cp.online}
                    onClick=${(ev) => {
                      if (ev.detail > 1) return;
                      setStopping(null);
                      act('Remote stop', 'POST', 'remote-stop', { transaction_id: t });
                    }}
                  >
                    Stop
                  </button>
                  <button class="quiet" data-testid="stop-cancel" onClick=${() => setStopping(null)}>Cancel</button>
                </span>`
              : html`<button data-testid="remote-stop" disabled=${busy || !cp.online} onClick=${() => setStopping(t)}>
                    Stop
                  </button>
                  ${!cp.online && html`<span class="muted"> the charger is offline</span>`}`
          }
        </p>`,
    )}
  </div>`;
}

/**
 * The second click of a double click does not submit: a double click on Run landed it on the Send
 * that took Run's place, and the operation went without being asked
 */
const noRepeat = (e) => {
  if (e.detail > 1) e.preventDefault();
};

/**
 * The keyboard's focus stays in the operations form: the question takes it on its Cancel (the
 * safe answer; Send is one Shift+Tab away), and Run gets it back once the question is gone or the
 * operation answered. Run and Send take each other's place, and Run is disabled while an operation
 * runs: each step dropped the focus to the top of the page. Only focus the form had is given back.
 */
function useKeptFocus(asking, busy) {
  const runRef = useRef(null);
  const cancelRef = useRef(null);
  const had = useRef(false);
  useEffect(() => {
    const active = document.activeElement;
    if (asking) {
      had.current = true;
      cancelRef.current?.focus();
    } else if (had.current && !busy && (!active || active === document.body)) {
      had.current = false;
      runRef.current?.focus();
    } else if (busy) had.current = true;
  }, [asking, busy]);
  return [runRef, cancelRef];
}

/** `text` as JSON, undefined when it is not (an empty body is `{}`). */
function parsedBody(text) {
  try {
    return JSON.parse(text || '{}');
  } catch {
    return undefined;
  }
}

/** Operations that may cut a charge that runs: the question says how many would be. */
const INTERRUPTS = new Set(['reset', 'change-availability']);

/**
 * What the question before sending adds to "Send <name> to <charger>?": the body's `type` (a hard
 * or soft reset, Inoperative or Operative), and the transactions running that it may interrupt.
 */
function questionDetail(name, body, cp) {
  const parsed = parsedBody(body);
  const type = parsed && typeof parsed.type === 'string' ? ` (${parsed.type})` : '';
  const running = cp.open_transactions.length;
  const warning =
    INTERRUPTS.has(name) && running > 0
      ? ` ${running} transaction${running === 1 ? '' : 's'} running on it may be interrupted.`
      : '';
  return `${type}${warning}`;
}

function Operations({ cp, onSend, onDone }) {
  const names = operationsFor(cp.protocol);
  const [name, setName] = useState(firstRead(names));
  const [body, setBody] = useState(exampleOf(firstRead(names), cp));
  const [result, setResult] = useState(null);
  // an operation that changes the charger is sent at the second click, naming what and where
  const [asking, setAsking] = useState(false);
  // an operation the charger had not answered when the route did: its outcome, once the
  // charger's command record has it (an answer, a timeout, an expiry)
  useEffect(() => {
    if (!result?.command_id) return;
    const c = cp.commands.find((x) => x.command_id === result.command_id);
    if (!c || !FINAL(c.status)) return;
    const text = `${result.name}: ${c.status}${c.detail ? ` - ${c.detail}` : ''}`;
    setResult({ ok: accepted(c.status), text });
    // the reply of an operation that returns data, which came after the route answered
    if (c.has_reply)
      replyOf(cp.id, c.command_id)
        .then((reply) => setResult({ ok: accepted(c.status), text: `${text}${replyText(reply)}` }))
        .catch(() => undefined);
  }, [cp, result]);
  // the previous operation's result goes with it (it read as the next one's)
  const choose = (n) => (setName(n), setBody(exampleOf(n, cp)), setAsking(false), setResult(null));
  // one operation at a time: a double click on Run sent it twice
  const [busy, once] = useOneAtATime();
  const [runRef, cancelRef] = useKeptFocus(asking, busy);
  const run = (e) => {
    e.preventDefault();
    if (changesCharger(name) && !asking) {
      // a body that is not JSON is said at once, not after the question was answered
      if (parsedBody(body) === undefined) return setResult({ ok: false, text: 'The body is not JSON' });
      setResult(null);
      return setAsking(true);
    }
    setAsking(false);
    return once(() => send());
  };
  const send = async () => {
    onSend();
    const parsed = parsedBody(body);
    if (parsed === undefined) {
      setResult({ ok: false, text: 'The body is not JSON' });
      return;
    }
    setResult({ ok: true, pending: true, text: `${name}: sending…` });
    try {
      const method = OPERATIONS[name][2] ?? 'POST';
      const res = await api(
        method,
        `/v1/charge-points/${enc(cp.id)}/${name}`,
        method === 'DELETE' ? undefined : parsed,
      );
      if (method === 'DELETE') {
        setResult({ ok: true, text: `${name}: dropped` });
      } else if (method === 'PUT' && name !== 'password') {
        setResult({
          ok: true,
          text: `${name}: ${JSON.stringify(res[name === 'boot-policy' ? 'boot_policy' : name])} stored`,
        });
      } else {
        setResult(resultOf(name, res));
      }
    } catch (err) {
      setResult({ ok: false, text: failureText(name, err) });
    }
    onDone();
  };
  return html`<form class="op-form" onSubmit=${run} data-testid="op-form">
    <label
      >Operation
      <select
        data-testid="op-select"
        aria-label="operation"
        value=${name}
        onChange=${(e) => choose(e.currentTarget.value)}
      >
        ${names.map((n) => html`<option value=${n}>${n}</option>`)}
      </select>
    </label>
    <textarea
      data-testid="op-body"
      aria-label="operation body (JSON)"
      rows="3"
      value=${body}
      onInput=${(e) => (setBody(e.currentTarget.value), setAsking(false))}
    ></textarea>
    ${
      asking
        ? html`<span class="actions" data-testid="op-confirm">
            Send ${name} to ${cp.id}?${questionDetail(name, body, cp)}
            <button type="submit" class="danger" disabled=${busy} data-testid="op-send" onClick=${noRepeat}>
              Send
            </button>
            <button
              type="button"
              class="quiet"
              ref=${cancelRef}
              onClick=${() => setAsking(false)}
              data-testid="op-cancel"
            >
              Cancel
            </button>
          </span>`
        : html`<button type="submit" ref=${runRef} disabled=${busy} data-testid="op-run">Run</button>`
    }
    ${
      result &&
      html`<pre class=${`notice ${result.pending ? 'pending' : result.ok ? 'ok' : 'err'}`} data-testid="op-result">
${result.text}</pre>`
    }
  </form>`;
}

/** The charger's recent commands, newest first; one with a stored reply shows it on demand. */
function Commands({ cp }) {
  const [shown, setShown] = useState({});
  const show = async (id) => {
    try {
      setShown({ ...shown, [id]: JSON.stringify(await replyOf(cp.id, id), null, 2) ?? 'no reply kept' });
    } catch (err) {
      setShown({ ...shown, [id]: failureText('Reply', err) });
    }
  };
  return html`<ul data-testid="charger-commands">
    ${cp.commands
      .slice()
      .reverse()
      .map(
        (c) =>
          html`<li data-testid=${`command-${c.command_id}`}>
            ${`${fmtTime(c.updated_at)} ${c.kind}: `}
            <span class=${`chip ${tone(c.status)}`}>${c.status}</span>${c.detail ? ` (${c.detail})` : ''}
            ${
              c.has_reply &&
              (shown[c.command_id] === undefined
                ? html` <button class="quiet" data-testid="show-reply" onClick=${() => show(c.command_id)}>
                    Reply
                  </button>`
                : html`<pre data-testid="reply">${shown[c.command_id]}</pre>`)
            }
          </li>`,
      )}
  </ul>`;
}

/**
 * The reservation the charger holds on EVSE `evse` (or on the whole charger), if any: the EVSE may
 * still report Available (a charger need not say Reserved), and a start there with another token
 * is refused by the charger. It was said in the Reservations card only.
 */
function ReservedFor({ cp, evse }) {
  const r = cp.reservations.find((x) => x.status === 'Accepted' && (x.evse_id === evse || x.evse_id === null));
  if (!r) return null;
  const where = r.evse_id === null ? ' (the whole charger)' : '';
  return html`<span class="muted" data-testid="reserved-for">
    reserved for ${r.id_tag} until ${fmtTime(r.expiry_date)}${where}</span
  >`;
}

/** The reservations the charger holds, each with its id and a cancel. */
function Reservations({ cp, act, busy }) {
  if (cp.reservations.length === 0) return html`<p class="muted">No reservation held.</p>`;
  return html`<ul data-testid="reservations">
    ${cp.reservations.map(
      (r) =>
        html`<li data-testid=${`reservation-${r.reservation_id}`}>
          ${`Reservation ${r.reservation_id} · ${r.evse_id ? `EVSE ${r.evse_id}` : 'any EVSE'} · ${r.id_tag} · until ${fmtTime(r.expiry_date)} `}
          <span class=${`chip ${tone(r.status)}`}>${r.status}</span>
          <button
            class="quiet"
            data-testid="cancel-reservation"
            disabled=${busy || !cp.online}
            onClick=${() => act('Cancel reservation', 'POST', 'cancel-reservation', { reservation_id: r.reservation_id })}
          >
            Cancel
          </button>
        </li>`,
    )}
  </ul>`;
}

function Links({ cp, onDone }) {
  const [notice, setNotice] = useState(null);
  const link = async (e) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const n = Number(f.get('evse_number'));
    try {
      await api('PUT', `/v1/charge-points/${enc(cp.id)}/evses/${n}`, {
        location_id: String(f.get('location_id')),
        evse_uid: String(f.get('evse_uid')),
      });
      setNotice({ ok: true, text: `EVSE ${n} linked` });
    } catch (err) {
      setNotice({ ok: false, text: failureText('Link', err) });
    }
    onDone();
  };
  const unlink = async (n) => {
    try {
      await api('DELETE', `/v1/charge-points/${enc(cp.id)}/evses/${n}`);
      setNotice({ ok: true, text: `EVSE ${n} unlinked` });
    } catch (err) {
      setNotice({ ok: false, text: failureText('Unlink', err) });
    }
    onDone();
  };
  return html`<div data-testid="evse-links">
    ${(cp.evse_links ?? []).length === 0 && html`<p class="muted">No EVSE linked to an OCPI location.</p>`}
    <ul>
      ${(cp.evse_links ?? []).map(
        (l) =>
          html`<li data-testid=${`evse-link-${l.evse_number}`}>
            EVSE ${l.evse_number} → ${l.location_id} / ${l.evse_uid}
            <button class="quiet" data-testid="unlink" onClick=${() => unlink(l.evse_number)}>Unlink</button>
          </li>`,
      )}
    </ul>
    <form class="link-form" data-testid="link-form" onSubmit=${link}>
      <input name="evse_number" type="number" min="1" required placeholder="EVSE" aria-label="EVSE number" />
      <input name="location_id" required maxlength="39" placeholder="location id" aria-label="location id" />
      <input name="evse_uid" required maxlength="39" placeholder="EVSE uid" aria-label="OCPI EVSE uid" />
      <button type="submit">Link</button>
    </form>
    <${Notice} notice=${notice} />
  </div>`;
}

function SessionList({ id, sessions }) {
  if (!sessions) return null;
  if (sessions.items.length === 0) return html`<p class="muted">No session yet.</p>`;
  // the newest only: the rest are a list of their own (the card said nothing of them)
  const more =
    sessions.total > sessions.items.length &&
    html`<p data-testid="all-sessions">
      ${`The newest ${sessions.items.length} of ${sessions.total}. `}
      <a href=${`#/sessions${query({ charge_point_id: id })}`}>All of this charger's sessions</a>
    </p>`;
  return html`${more}
    <ul class="sessions" data-testid="charger-sessions">
      ${sessions.items.map(
        (s) =>
          // the separators are values: htm drops the whitespace of a text that runs across lines
          html`<li data-testid=${`session-${s.transaction_id}`} data-status=${s.status}>
            <${Status} status=${s.status} /> <a href=${`#/sessions/${enc(s.id)}`}>${s.transaction_id}</a>
            ${` · ${s.id_tag ?? 'no token'} · ${fmtTime(s.started_at)} · ${fmtDuration(sessionDurationMs(s))} · `}
            <span data-testid="energy">${fmtKwh(s.energy_wh)}</span>${' kWh'}
            ${s.cost && html`${' · '}<span data-testid="cost">${fmtCost(s.cost)}</span>`}${s.stop_reason && ` · ${s.stop_reason}`}
          </li>`,
      )}
    </ul>`;
}

/**
 * An action's notice: sent, then the charger's answer once its command record has it. One action
 * at a time: a click while one is in flight does nothing (on a slow network a double click sent
 * a reset, or a remote start, twice), and `busy` disables the buttons meanwhile.
 */
function useActions(cp, reload) {
  const [notice, setNotice] = useState(null);
  const [watch, setWatch] = useState(null);
  const [busy, once] = useOneAtATime();
  useEffect(() => {
    if (!watch || !cp) return;
    const c = cp.commands.find((x) => x.command_id === watch.command_id);
    if (c && FINAL(c.status)) {
      setNotice({ ok: accepted(c.status), text: `${watch.label}: ${c.status}${c.detail ? ` (${c.detail})` : ''}` });
      setWatch(null);
    }
  }, [cp, watch]);
  const act = (label, method, path, body) => once(() => send(label, method, path, body));
  const send = async (label, method, path, body) => {
    try {
      const { data } = await call(method, `/v1/charge-points/${enc(cp.id)}/${path}`, body);
      if (FINAL(data.command_status)) {
        // answered, or refused as it came (a full queue): the outcome now
        const detail = data.detail ? ` (${data.detail})` : '';
        setNotice({ ok: accepted(data.command_status), text: `${label}: ${data.command_status}${detail}` });
      } else {
        // neither gone through nor failed: blue until the charger's answer
        setNotice({ pending: true, text: `${label}: ${data.command_status}, waiting for the charger's answer…` });
        setWatch({ label, command_id: data.command_id });
      }
    } catch (err) {
      // unreached: the server was away; the notice goes once the feed is back (`settled`)
      setNotice({ ok: false, text: failureText(label, err), unreached: err instanceof ApiError && err.status === 0 });
    }
    reload();
  };
  // a newer action elsewhere on the page (an operation), or the feed back after a cut that this
  // notice's failure was part of: an outcome shown at the top beside a newer one read as current
  // (a green "Remote stop: Accepted" above a refused operation; "not sent" once the server was back)
  const settled = (why) => setNotice((n) => (n && !n.pending && (why === 'newer' || n.unreached) ? null : n));
  return [notice, act, busy, settled];
}

/**
 * The page is read again when its first reservation expires: the API leaves an expired one out
 * (1.6 never says a reservation ended), and the page showed it until its next read, up to 30 s
 * later. Each read schedules the next; one the server still holds (a browser's clock ahead of
 * the server's) is asked again a second later.
 */
function useExpiryReload(cp, reload) {
  const next = Math.min(...(cp?.reservations ?? []).map((r) => Date.parse(r.expiry_date)).filter(Number.isFinite));
  useEffect(() => {
    if (!Number.isFinite(next)) return undefined;
    const timer = setTimeout(() => void reload(), Math.max(1000, next - Date.now() + 250));
    return () => clearTimeout(timer);
  }, [next, cp]);
}

/** What a status's time is: when the status began. */
const SINCE = "the charger's time of the report that set this status; a report repeating it changes nothing";

export function ChargerPage({ id }) {
  const base = `/v1/charge-points/${enc(id)}`;
  // with whose connections `online` was read (X-Online-Scope: this_process while Redis is away)
  const [{ data: cp, error }, reload] = useLoad(
    () => call('GET', base).then(({ data, headers }) => ({ ...data, onlineScope: headers.get('X-Online-Scope') })),
    [id],
  );
  useOnlineReload(cp?.onlineScope, reload);
  useExpiryReload(cp, reload);
  const [{ data: events }, reloadEvents] = useLoad(() => page(`${base}/events?limit=20`), [id]);
  const [{ data: sessions }, reloadSessions] = useLoad(
    () => page(`/v1/sessions${query({ charge_point_id: id, limit: 20 })}`),
    [id],
  );
  // a transaction's start or end is a session event: the charger's open transactions change with it
  const soon = useDebounced(
    (what) => (what === 'session' ? (reloadSessions(), reload()) : (reload(), reloadEvents())),
    150,
  );
  useEffect(() => onEvent((e) => e.charge_point_id === id && soon(e.type)), [id]);
  const [notice, act, busy, settled] = useActions(cp, () => soon('charge-point'));
  useEffect(() => onResync(() => (soon('charge-point'), soon('session'), settled('resync'))), [id]);
  if (!cp)
    return html`<section>
      <h1>${id}</h1>
      <${ErrorLine} error=${error} />
    </section>`;
  return html`<section class="charger" data-testid="charger">
    <p><a href="#/chargers">← Chargers</a></p>
    <h1 data-testid="charger-title">
      ${cp.id}
      <span class=${`chip ${cp.online ? 'ok' : 'off'}`} data-testid="online">${cp.online ? 'online' : 'offline'}</span>
    </h1>
    <${ErrorLine} error=${error} />
    <${OnlineScopeNote} scope=${cp.onlineScope} />
    <${Notice} notice=${notice} />
    <div class="grid">
      <div class="card">
        <h2>Charger</h2>
        <${Facts} cp=${cp} />
      </div>
      <div class="card">
        <h2>Connectors</h2>
        <${Connectors} cp=${cp} act=${act} busy=${busy} />
      </div>
      <div class="card">
        <h2>Operations</h2>
        <${Operations}
          key=${cp.protocol}
          cp=${cp}
          onSend=${() => settled('newer')}
          onDone=${() => soon('charge-point')}
        />
      </div>
      <div class="card">
        <h2>Commands</h2>
        <${Commands} cp=${cp} />
      </div>
      <div class="card">
        <h2>Reservations</h2>
        <${Reservations} cp=${cp} act=${act} busy=${busy} />
      </div>
      <div class="card">
        <h2>Sessions</h2>
        <${SessionList} id=${id} sessions=${sessions} />
      </div>
      <div class="card">
        <h2>Event log</h2>
        <ul data-testid="charger-events">
          ${events?.items.length === 0 && html`<li class="muted">No event reported yet.</li>`}
          ${events?.items.map((e) => html`<li class=${e.severity}>${fmtTime(e.timestamp)} [${e.severity}] ${e.summary}</li>`)}
        </ul>
      </div>
      <div class="card">
        <h2>OCPI EVSE links</h2>
        <${Links} cp=${cp} onDone=${() => soon('charge-point')} />
      </div>
    </div>
  </section>`;
}
