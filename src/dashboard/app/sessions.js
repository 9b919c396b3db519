// Sessions: a page at a time from GET /v1/sessions, with duration, energy, mean power, cost and
// stop reason; CSV of what the filters select (up to 1,000). Session events re-read the page
// shown, at most once a second.
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { enc, failureText, onEvent, onResync, page, query } from './api.js';
import { fmtCost, fmtDuration, fmtKwh, fmtTime, kwh, localNumber, meanKw, sessionDurationMs } from './format.js';
import { ErrorLine, Notice, Status, rangeText, useDebounced, useLoad } from './ui.js';

const LIMIT = 50;

const go = (f) => {
  location.hash = `#/sessions${query(f)}`;
};

const COLUMNS = [
  ['charge_point_id', (s) => s.charge_point_id],
  ['transaction_id', (s) => s.transaction_id],
  ['id_tag', (s) => s.id_tag ?? ''],
  ['status', (s) => s.status],
  ['started_at', (s) => s.started_at],
  ['stopped_at', (s) => s.stopped_at ?? ''],
  ['duration_s', (s) => String(Math.round(sessionDurationMs(s) / 1000))],
  ['energy_kwh', (s) => kwh(s.energy_wh)],
  ['mean_power_kw', (s) => meanKw(s)],
  ['cost_excl_vat', (s) => (s.cost ? String(s.cost.excl_vat) : '')],
  ['cost_incl_vat', (s) => (s.cost?.incl_vat == null ? '' : String(s.cost.incl_vat))],
  ['currency', (s) => s.cost?.currency ?? ''],
  ['cost_final', (s) => (s.cost ? String(s.cost.final) : '')],
  ['stop_reason', (s) => s.stop_reason ?? ''],
  ['stop_id_tag', (s) => s.stop_id_tag ?? ''],
  // what tells sessions apart where a charger used a transaction id again, and leads to /v1/sessions/{id}
  ['session_id', (s) => s.id],
  ['evse_id', (s) => String(s.evse_id)],
  ['connector_id', (s) => String(s.connector_id)],
  ['protocol', (s) => s.protocol],
];

/**
 * One CSV cell. Text a spreadsheet would run as a formula (a leading `=`, `+`, `-`, `@`, tab or
 * carriage return: an id tag comes from the charger) gets a leading `'`, numbers stay as they
 * are; then quoted when it holds a quote, comma or line break.
 */
const cell = (text) => {
  const v = /^[=+\-@\t\r]/.test(text) && !/^-?\d+(\.\d+)?$/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
};

export function toCsv(sessions) {
  const lines = [COLUMNS.map(([name]) => name).join(',')];
  for (const s of sessions) lines.push(COLUMNS.map(([, get]) => cell(String(get(s)))).join(','));
  return `${lines.join('\n')}\n`;
}

/** The time zone the console shows times in: the browser's (the days of the pickers are its days). */
const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';

/** The instant a day `d` (YYYY-MM-DD) begins in the browser's zone, as the API takes it. */
const dayStart = (d) => new Date(`${d}T00:00:00`).toISOString();

/**
 * The API's query for the filters `f`: a day `from`/`before` is a day of the browser's zone, as
 * the times the table shows are (it was a UTC day, so an operator east of UTC missed the sessions
 * started after local midnight); the CSV's times stay in UTC, with their `Z`.
 */
const apiQuery = (f) => ({
  status: f.status,
  charge_point_id: f.charge_point_id,
  started_from: f.from ? dayStart(f.from) : undefined,
  started_before: f.before ? dayStart(f.before) : undefined,
});

/** The most sessions one CSV holds: past it, the operator is told to choose fewer days. */
const MAX_EXPORT = 100_000;
const EXPORT_PAGE = 1000;

/**
 * Every session the filters `f` select, newest first, read 1,000 at a time (the API's most), up
 * to MAX_EXPORT; `total` is how many matched. The sessions started after the export began are
 * left out, so that the pages do not shift under it.
 */
async function exportedSessions(f) {
  const began = new Date().toISOString();
  const q = apiQuery(f);
  const before = q.started_before && q.started_before < began ? q.started_before : began;
  const seen = new Set();
  const items = [];
  let total = 0;
  for (let offset = 0; offset < MAX_EXPORT; offset += EXPORT_PAGE) {
    const got = await page(`/v1/sessions${query({ ...q, started_before: before, offset, limit: EXPORT_PAGE })}`);
    total = got.total;
    for (const s of got.items) {
      if (seen.has(s.id) || items.length >= MAX_EXPORT) continue;
      seen.add(s.id);
      items.push(s);
    }
    if (got.items.length < EXPORT_PAGE) break;
  }
  return { items, total };
}

/** Downloads the sessions `f` selects as CSV, named by its days; says how many it holds. */
async function exportCsv(f) {
  const { items, total } = await exportedSessions(f);
  const url = URL.createObjectURL(new Blob([toCsv(items)], { type: 'text/csv' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `sessions${f.from ? `-from-${f.from}` : ''}${f.before ? `-before-${f.before}` : ''}.csv`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return items.length < total
    ? {
        ok: false,
        text: `Exported the newest ${items.length} of ${total} sessions, the most one file holds: choose fewer days.`,
      }
    : { ok: true, text: `Exported ${items.length} session${items.length === 1 ? '' : 's'}.` };
}

/** Whether `d` (YYYY-MM-DD) is a day of the calendar (2026-13-45 is none: a Date it makes is invalid). */
const isDay = (d) => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(d)) return false;
  const t = Date.parse(`${d}T00:00:00Z`);
  return Number.isFinite(t) && new Date(t).toISOString().startsWith(d);
};

/** What is wrong with the days of `f`, in the pickers' words; undefined when nothing. */
function daysProblem(f) {
  for (const [k, word] of [
    ['from', 'started from'],
    ['before', 'before'],
  ])
    if (f[k] && !isDay(f[k])) return `"${word}" ${f[k]} is no day of the calendar.`;
  if (f.from && f.before && f.before <= f.from)
    return `"before" must be a later day than "started from": one day D is from D before the day after.`;
  return undefined;
}

/** A day picker of the filters, labelled. */
function Day({ text, label, testid, value, onChange }) {
  return html`<label class="muted"
    >${text} <input type="date" aria-label=${label} data-testid=${testid} value=${value ?? ''} onChange=${onChange}
  /></label>`;
}

export function Sessions({ params }) {
  const f = {
    status: params.get('status') || undefined,
    charge_point_id: params.get('charge_point_id') || undefined,
    from: params.get('from') || undefined,
    before: params.get('before') || undefined,
    offset: params.get('offset') || undefined,
  };
  const offset = Number(f.offset ?? 0);
  const key = query(f);
  const badDays = daysProblem(f);
  const [exported, setExported] = useState(null);
  // one export at a time: a second click while one reads its pages would download the file twice
  const [exporting, setExporting] = useState(false);
  useEffect(() => setExported(null), [key]);
  const [{ data, error }, reload] = useLoad(
    () =>
      badDays
        ? Promise.resolve({ items: [], total: 0 })
        : page(`/v1/sessions${query({ ...apiQuery(f), offset: f.offset, limit: LIMIT })}`),
    [key],
  );
  const day = (k) => (e) => go({ ...f, [k]: e.currentTarget.value || undefined, offset: undefined });
  const soon = useDebounced(() => void reload(), 1000);
  useEffect(() => onEvent((e) => e.type === 'session' && soon('sessions')), []);
  useEffect(() => onResync(() => soon('sessions')), []);
  const total = data?.total ?? 0;
  return html`<section>
    <h1>Sessions</h1>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <select
        aria-label="session status"
        data-testid="session-status"
        value=${f.status ?? ''}
        onChange=${(e) => go({ ...f, status: e.currentTarget.value || undefined, offset: undefined })}
      >
        <option value="">active and completed</option>
        <option value="ACTIVE">active</option>
        <option value="COMPLETED">completed</option>
      </select>
      <input
        type="search"
        placeholder="charge point id"
        aria-label="charge point id"
        value=${f.charge_point_id ?? ''}
        onChange=${(e) => go({ ...f, charge_point_id: e.currentTarget.value.trim() || undefined, offset: undefined })}
      />
      <${Day}
        text=${`started from (${ZONE})`}
        label="started from"
        testid="started-from"
        value=${f.from}
        onChange=${day('from')}
      />
      <${Day}
        text="before"
        label="started before"
        testid="started-before"
        value=${f.before}
        onChange=${day('before')}
      />
      <button
        type="button"
        data-testid="csv"
        disabled=${Boolean(badDays) || exporting}
        onClick=${() => {
          setExporting(true);
          void exportCsv(f)
            .then(setExported, (err) => setExported({ ok: false, text: failureText('Export', err) }))
            .finally(() => setExporting(false));
        }}
      >
        ${exporting ? 'Exporting…' : 'Export CSV'}
      </button>
    </form>
    <${Notice} notice=${badDays ? { ok: false, text: badDays } : exported} />
    <${ErrorLine} error=${error} />
    <p class="muted" data-testid="range">
      ${error ? '' : data ? rangeText(offset, data.items.length, total, 'No session.') : 'Loading…'}
    </p>
    <table class="list">
      <thead>
        <tr>
          <th>Charge point</th>
          <th>Transaction</th>
          <th>Token</th>
          <th>Status</th>
          <th>Started</th>
          <th>Duration</th>
          <th>Energy (kWh)</th>
          <th>Power (kW)</th>
          <th>Cost (incl. VAT)</th>
          <th>Stop reason</th>
        </tr>
      </thead>
      <tbody data-testid="sessions">
        ${data?.items.map(
          (s) =>
            html`<tr data-testid=${`session-${s.charge_point_id}`} data-status=${s.status}>
              <td data-label="Charge point">
                <a href=${`#/chargers/${enc(s.charge_point_id)}`}>${s.charge_point_id}</a>
              </td>
              <td data-label="Transaction">
                <a href=${`#/sessions/${enc(s.id)}`} data-testid="open-session">${s.transaction_id}</a>
              </td>
              <td data-label="Token">${s.id_tag ?? ''}</td>
              <td data-label="Status"><${Status} status=${s.status} /></td>
              <td data-label="Started">${fmtTime(s.started_at)}</td>
              <td data-label="Duration">${fmtDuration(sessionDurationMs(s))}</td>
              <td data-label="Energy (kWh)" data-testid="energy">${fmtKwh(s.energy_wh)}</td>
              <td data-label="Power (kW)">${localNumber(meanKw(s))}</td>
              <td
                data-label="Cost (incl. VAT)"
                data-testid="cost"
                title=${s.cost ? `excl. VAT ${s.cost.excl_vat}` : ''}
              >
                ${fmtCost(s.cost)}
              </td>
              <td data-label="Stop reason">${s.stop_reason ?? ''}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${
      !error &&
      html`<nav class="pager">
        <button
          disabled=${offset === 0}
          onClick=${() => go({ ...f, offset: Math.max(0, offset - LIMIT) || undefined })}
        >
          ← Previous
        </button>
        <button disabled=${offset + LIMIT >= total} onClick=${() => go({ ...f, offset: offset + LIMIT })}>
          Next →
        </button>
      </nav>`
    }
  </section>`;
}
