// The charger list: searched, filtered, sorted and paged by the server (GET /v1/charge-points),
// its state in the location hash. An event about a charger on the page re-reads that one charger
// (GET /v1/charge-points/{id}); nothing else is fetched again.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { ApiError, api, enc, onEvent, onResync, page, query } from './api.js';
import { fmtTime } from './format.js';
import {
  ErrorLine,
  OnlineScopeNote,
  Status,
  rangeText,
  useDebounced,
  useFollowed,
  useLoad,
  useOnlineReload,
} from './ui.js';

const LIMIT = 50;
const STATUSES = [
  'Available',
  'Charging',
  'Occupied',
  'Preparing',
  'SuspendedEV',
  'SuspendedEVSE',
  'Finishing',
  'Reserved',
  'Unavailable',
  'Faulted',
  'Unknown',
];

function filtersOf(params) {
  const f = {};
  for (const k of ['q', 'protocol', 'online', 'state', 'status', 'location', 'sort', 'order', 'offset']) {
    const v = params.get(k);
    if (v) f[k] = v;
  }
  // a status in any case (the API takes it so) is shown as its option spells it
  if (f.status) f.status = STATUSES.find((s) => s.toLowerCase() === f.status.toLowerCase()) ?? f.status;
  return f;
}

const go = (f) => {
  location.hash = `#/chargers${query(f)}`;
};

export function ChargerRow({ cp }) {
  const tx = cp.active_transactions[cp.active_transactions.length - 1];
  // the charger's own status (1.6 connector 0) only when it says something is wrong with it
  const connectors = cp.connectors.filter(
    (c) => c.connector_id > 0 || c.status === 'Faulted' || (c.error_code && c.error_code !== 'NoError'),
  );
  return html`<tr data-testid=${`cp-${cp.id}`} data-online=${cp.online ? 'true' : 'false'}>
    <td data-label="Id"><a href=${`#/chargers/${enc(cp.id)}`} data-testid="open">${cp.id}</a></td>
    <td data-label="State">
      <span class=${`chip ${cp.online ? 'ok' : 'off'}`} data-testid="online">${cp.online ? 'online' : 'offline'}</span>
      <span class="muted protocol" data-testid="protocol"> ${cp.protocol}</span>
    </td>
    <td data-label="Connectors" data-testid="connectors">
      ${
        connectors.length === 0
          ? html`<span class="muted">none reported</span>`
          : html`<span class="connector-list"
              >${connectors.map(
                (c) =>
                  html`<span
                    class="connector"
                    title=${c.connector_id === 0 ? 'the whole charger' : `EVSE ${c.evse_id}, connector ${c.connector_id}`}
                    >${c.connector_id === 0 ? 'charger' : `${c.evse_id}/${c.connector_id}`}
                    <${Status} status=${c.status} error=${c.error_code}
                  /></span>`,
              )}</span
            >`
      }
    </td>
    <td data-label="Charger">
      ${cp.boot ? `${cp.boot.vendor} ${cp.boot.model}` : html`<span class="muted">not booted</span>`}
    </td>
    <td data-label="Last seen" data-testid="last-seen">
      ${cp.last_seen ? fmtTime(cp.last_seen) : html`<span class="muted">never</span>`}
    </td>
    <td data-label="Transaction">${tx ?? ''}</td>
  </tr>`;
}

function Filters({ f }) {
  const [text, setText] = useFollowed(f.q ?? '');
  const [where, setWhere] = useFollowed(f.location ?? '');
  // run when typing pauses, unless the address moved on meanwhile (a link followed, Back pressed)
  const typed = useDebounced((_k, q, typedAt) => location.hash === typedAt && go({ ...f, q, offset: undefined }), 250, {
    restart: true,
  });
  // a filter changed while a search waits for the typing pause takes the search with it
  const set = (k) => (e) =>
    go({ ...f, q: text || undefined, [k]: e.currentTarget.value || undefined, offset: undefined });
  // Enter in either field applies both as typed
  const submit = (e) => (
    e.preventDefault(),
    go({ ...f, q: text || undefined, location: where || undefined, offset: undefined })
  );
  return html`<form class="filters" onSubmit=${submit}>
    <input
      type="search"
      placeholder="Search id, vendor, model"
      aria-label="search"
      data-testid="search"
      value=${text}
      onInput=${(e) => (setText(e.currentTarget.value), typed('q', e.currentTarget.value, location.hash))}
    />
    <select aria-label="online" data-testid="filter-online" value=${f.online ?? ''} onChange=${set('online')}>
      <option value="">online and offline</option>
      <option value="true">online</option>
      <option value="false">offline</option>
    </select>
    <select aria-label="state" data-testid="filter-state" value=${f.state ?? ''} onChange=${set('state')}>
      <option value="">all chargers</option>
      <option value="charging">charging now</option>
      <option value="faulted">faulted or reporting an error</option>
    </select>
    <select aria-label="status" data-testid="filter-status" value=${f.status ?? ''} onChange=${set('status')}>
      <option value="">any status</option>
      ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
    </select>
    <input
      aria-label="location"
      placeholder="OCPI location id"
      data-testid="filter-location"
      value=${where}
      onInput=${(e) => setWhere(e.currentTarget.value)}
      onChange=${set('location')}
    />
    <select aria-label="protocol" data-testid="filter-protocol" value=${f.protocol ?? ''} onChange=${set('protocol')}>
      <option value="">any protocol</option>
      <option value="ocpp1.6">OCPP 1.6</option>
      <option value="ocpp2.0.1">OCPP 2.0.1</option>
    </select>
    <select
      aria-label="sort"
      data-testid="sort"
      value=${`${f.sort ?? 'id'}:${f.order ?? 'asc'}`}
      onChange=${(e) => {
        const [sort, order] = e.currentTarget.value.split(':');
        go({ ...f, q: text || undefined, sort, order, offset: undefined });
      }}
    >
      <option value="id:asc">id A→Z</option>
      <option value="id:desc">id Z→A</option>
      <option value="status:asc">needs attention first</option>
      <option value="last_seen:desc">seen most recently</option>
      <option value="last_seen:asc">seen longest ago</option>
    </select>
  </form>`;
}

export function ChargerList({ params }) {
  const f = filtersOf(params);
  const offset = Number(f.offset ?? 0);
  const key = query(f);
  const [{ data, error }, reload] = useLoad(() => page(`/v1/charge-points${query({ ...f, limit: LIMIT })}`), [key]);
  useEffect(() => onResync(() => void reload()), []);
  useOnlineReload(data?.headers.get('X-Online-Scope'), reload);
  // rows re-read after an event, by id, over the page as loaded
  const [fresh, setFresh] = useState(new Map());
  useEffect(() => setFresh(new Map()), [data]);
  const rereadRow = async (id) => {
    try {
      const cp = await api('GET', `/v1/charge-points/${enc(id)}`);
      setFresh((m) => new Map(m).set(id, cp));
    } catch (err) {
      // removed: the page is read again without it (its row stayed until a reload); the network:
      // the next event or page load shows it
      if (err instanceof ApiError && err.status === 404) void reload();
    }
  };
  const reread = useDebounced(rereadRow, 150);
  const rereadSoon = useDebounced(rereadRow, 1000);
  // a list selected or ordered by what changes live (status, online, charging, faulted, last seen):
  // an event may move any charger into it, out of it or within it, so the page is read again, at
  // most once a second; a list by id or search re-reads only the row an event names
  const soon = useDebounced(() => void reload(), 1000);
  const live = Boolean(f.state || f.status || f.online || (f.sort && f.sort !== 'id'));
  // read by the one subscription, so that an event right after a page loads is not checked against
  // the previous page (nor against the previous filters)
  const shown = useRef({ data, live });
  shown.current = { data, live };
  useEffect(
    () =>
      onEvent((e) => {
        // a running session's meter values change nothing a list shows: one re-read a charging
        // charger a second was the flood of a page of them
        if ((e.type !== 'charge-point' && e.type !== 'session') || e.progress) return;
        if (shown.current.live) soon('page');
        // a session's start or end changes the row's transaction
        else if (shown.current.data?.items.some((cp) => cp.id === e.charge_point_id))
          (e.type === 'session' ? rereadSoon : reread)(e.charge_point_id);
      }),
    [],
  );
  const rows = data?.items.map((cp) => fresh.get(cp.id) ?? cp) ?? [];
  const total = data?.total ?? 0;
  return html`<section>
    <h1>Chargers</h1>
    <${Filters} f=${f} />
    <${ErrorLine} error=${error} />
    <${OnlineScopeNote} scope=${data?.headers.get('X-Online-Scope')} />
    <p class="muted" data-testid="range">
      ${error ? '' : data ? rangeText(offset, rows.length, total, 'No charger matches.') : 'Loading…'}
    </p>
    <table class="list">
      <thead>
        <tr>
          <th>Id</th>
          <th>State</th>
          <th title="EVSE/connector and its status">Connectors <span class="muted">(EVSE/connector)</span></th>
          <th>Charger</th>
          <th>Last seen</th>
          <th>Transaction</th>
        </tr>
      </thead>
      <tbody data-testid="charge-points">
        ${rows.map((cp) => html`<${ChargerRow} key=${cp.id} cp=${cp} />`)}
      </tbody>
    </table>
    ${
      !error &&
      html`<nav class="pager">
        <button
          disabled=${offset === 0}
          data-testid="prev"
          onClick=${() => go({ ...f, offset: Math.max(0, offset - LIMIT) || undefined })}
        >
          ← Previous
        </button>
        <button
          disabled=${offset + LIMIT >= total}
          data-testid="next"
          onClick=${() => go({ ...f, offset: offset + LIMIT })}
        >
          Next →
        </button>
      </nav>`
    }
  </section>`;
}
