// Tariffs: our own tariffs (GET /v1/ocpi/tariffs, the 2.2.1 shape an operator PUTs), each element
// spelled out (price components per dimension with VAT and step size, its restrictions), and a
// preview of what a session would cost under one (POST /v1/tariffs/price, docs/TARIFFS.md).
import { useState } from 'preact/hooks';
import { html } from './html.js';
import { api, enc, failureText, page, query } from './api.js';
import { cents, fmtTime, localNumber } from './format.js';
import { ErrorLine, Notice, useLoad, useOneAtATime } from './ui.js';

const LIMIT = 50;

const go = (f) => {
  location.hash = `#/tariffs${query(f)}`;
};

const UNIT = { ENERGY: 'kWh', TIME: 'hour', PARKING_TIME: 'hour', FLAT: 'session' };

/** "1 Wh", "5 min", "1 s": a step size in the dimension's unit (Wh for energy, seconds for time). */
function step(type, size) {
  if (type === 'FLAT') return '';
  if (type === 'ENERGY') return `billed per ${size} Wh`;
  if (size >= 60 && size % 60 === 0) return `billed per ${size / 60} min`;
  return `billed per ${size} s`;
}

const money = (currency, amount) => `${currency} ${localNumber(cents(amount))}`;

function component(currency, c) {
  const vat = c.vat === undefined ? 'VAT not given' : `+ ${c.vat}% VAT`;
  return `${c.type}: ${money(currency, c.price)} per ${UNIT[c.type] ?? c.type} ${vat}${c.type === 'FLAT' ? '' : `, ${step(c.type, c.step_size)}`}`;
}

const hours = (s) => `${(s / 3600).toFixed(2).replace(/\.?0+$/, '')} h`;

/** The restrictions of an element in words; '' when it always applies. */
export function restrictionsText(r) {
  if (!r) return '';
  const parts = [];
  if (r.start_time || r.end_time) parts.push(`${r.start_time ?? '00:00'}–${r.end_time ?? '24:00'}`);
  if (r.start_date || r.end_date) parts.push(`dates ${r.start_date ?? '…'} to ${r.end_date ?? '…'}`);
  if (r.day_of_week?.length) parts.push(r.day_of_week.map((d) => d.slice(0, 3).toLowerCase()).join(' '));
  if (r.min_kwh !== undefined) parts.push(`from ${r.min_kwh} kWh`);
  if (r.max_kwh !== undefined) parts.push(`below ${r.max_kwh} kWh`);
  if (r.min_current !== undefined) parts.push(`from ${r.min_current} A`);
  if (r.max_current !== undefined) parts.push(`below ${r.max_current} A`);
  if (r.min_power !== undefined) parts.push(`from ${r.min_power} kW`);
  if (r.max_power !== undefined) parts.push(`below ${r.max_power} kW`);
  if (r.min_duration !== undefined) parts.push(`after ${hours(r.min_duration)}`);
  if (r.max_duration !== undefined) parts.push(`before ${hours(r.max_duration)}`);
  if (r.reservation) parts.push(r.reservation === 'RESERVATION' ? 'reservations' : 'expired reservations');
  return parts.join(' · ');
}

const bounds = (t) =>
  [
    t.min_price && `at least ${money(t.currency, t.min_price.excl_vat)} excl. VAT`,
    t.max_price && `at most ${money(t.currency, t.max_price.excl_vat)} excl. VAT`,
  ]
    .filter(Boolean)
    .join(', ');

/**
 * A tariff's Delete, asked twice: it is removed at every eMSP too. Refused (409) while a connector
 * names it: the API's message says which.
 */
function DeleteTariff({ t, done }) {
  const [asking, setAsking] = useState(false);
  const [busy, once] = useOneAtATime();
  const remove = () =>
    once(async () => {
      try {
        await api('DELETE', `/v1/ocpi/tariffs/${enc(t.id)}`);
        done({ ok: true, text: `Tariff ${t.id} deleted; every eMSP is sent its DELETE` }, true);
      } catch (err) {
        done({ ok: false, text: failureText(`Deleting tariff ${t.id}`, err) }, false);
      } finally {
        setAsking(false);
      }
    });
  if (asking)
    return html`<span class="actions">
      <span>Delete here and at every eMSP?</span>
      <button class="danger" disabled=${busy} data-testid="confirm-delete" onClick=${remove}>Delete</button>
      <button class="quiet" disabled=${busy} onClick=${() => setAsking(false)}>Keep</button>
    </span>`;
  return html`<span class="actions">
    <button class="quiet" data-testid="delete" onClick=${() => setAsking(true)}>Delete</button>
  </span>`;
}

function Tariff({ t, done }) {
  return html`<article class="card tariff" data-testid=${`tariff-${t.id}`}>
    <h2>${t.id} <span class="muted">${t.currency}${t.type ? ` · ${t.type}` : ''}</span></h2>
    <${DeleteTariff} t=${t} done=${done} />
    <dl class="facts">
      ${
        bounds(t) &&
        html`<dt>Price bounds</dt>
          <dd>${bounds(t)}</dd>`
      }
      ${
        (t.start_date_time || t.end_date_time) &&
        html`<dt>Valid</dt>
          <dd>
            ${t.start_date_time ? fmtTime(t.start_date_time) : '…'} to
            ${t.end_date_time ? fmtTime(t.end_date_time) : '…'}
          </dd>`
      }
      ${
        t.tariff_alt_text?.length > 0 &&
        html`<dt>Text</dt>
          <dd>${t.tariff_alt_text[0].text}</dd>`
      }
      <dt>Updated</dt>
      <dd>${fmtTime(t.last_updated)}</dd>
    </dl>
    <ol class="elements" data-testid="elements">
      ${t.elements.map(
        (e, i) =>
          html`<li data-testid=${`element-${i + 1}`}>
            <span class="muted">${`Element ${i + 1} — ${restrictionsText(e.restrictions) || 'always'}`}</span>
            <ul>
              ${e.price_components.map((c) => html`<li data-testid="component">${component(t.currency, c)}</li>`)}
            </ul>
          </li>`,
      )}
    </ol>
  </article>`;
}

/** A local date and time for a datetime-local input: an hour ago, to the minute. */
function anHourAgo() {
  const d = new Date(Date.now() - 3_600_000);
  d.setSeconds(0, 0);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** The CDR of the preview: charging for `minutes` with `kwh`, then `parking` minutes parked. */
export function previewCdr(v, currency) {
  const start = new Date(v.start);
  const charged = Number(v.minutes) * 60_000;
  const parked = Number(v.parking || 0) * 60_000;
  const periods = [
    {
      start_date_time: start.toISOString(),
      dimensions: [
        { type: 'ENERGY', volume: Number(v.kwh) },
        { type: 'TIME', volume: Number((charged / 3_600_000).toFixed(4)) },
      ],
    },
  ];
  if (parked > 0)
    periods.push({
      start_date_time: new Date(start.getTime() + charged).toISOString(),
      dimensions: [{ type: 'PARKING_TIME', volume: Number((parked / 3_600_000).toFixed(4)) }],
    });
  return {
    start_date_time: start.toISOString(),
    end_date_time: new Date(start.getTime() + charged + parked).toISOString(),
    currency,
    charging_periods: periods,
  };
}

const TOTALS = [
  ['total_energy_cost', 'Energy'],
  ['total_time_cost', 'Charging time'],
  ['total_parking_cost', 'Parking'],
  ['total_fixed_cost', 'Fixed'],
];

function Preview({ tariffs }) {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  const [v, setV] = useState({ tariff: '', start: anHourAgo(), minutes: '60', kwh: '10', parking: '0', zone });
  const [priced, setPriced] = useState(null);
  const [notice, setNotice] = useState(null);
  const [busy, setBusy] = useState(false);
  const tariff = tariffs.find((t) => t.id === v.tariff) ?? tariffs[0];
  const set = (name) => (e) => setV({ ...v, [name]: e.currentTarget.value });
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    try {
      const out = await api('POST', '/v1/tariffs/price', {
        tariff,
        cdr: previewCdr(v, tariff.currency),
        time_zone: v.zone.trim(),
      });
      setPriced(out);
      setNotice(null);
    } catch (err) {
      setPriced(null);
      setNotice({ ok: false, text: `Could not price: ${err.message}` });
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="op-form card" onSubmit=${submit} data-testid="price-form">
    <h2>Price a session</h2>
    <label
      >Tariff
      <select data-testid="price-tariff" value=${tariff.id} onChange=${set('tariff')}>
        ${tariffs.map((t) => html`<option value=${t.id}>${t.id} (${t.currency})</option>`)}
      </select>
    </label>
    <div class="fields">
      <label
        >Start (this browser's clock)
        <input type="datetime-local" required value=${v.start} onInput=${set('start')} data-testid="price-start"
      /></label>
      <label
        >Charging (min)
        <input
          type="number"
          min="1"
          step="1"
          required
          value=${v.minutes}
          onInput=${set('minutes')}
          data-testid="price-minutes"
      /></label>
      <label
        >Energy (kWh)
        <input type="number" min="0" step="0.001" required value=${v.kwh} onInput=${set('kwh')} data-testid="price-kwh"
      /></label>
      <label
        >Parking after (min)
        <input type="number" min="0" step="1" value=${v.parking} onInput=${set('parking')} data-testid="price-parking"
      /></label>
      <label>Time zone <input required value=${v.zone} onInput=${set('zone')} data-testid="price-zone" /></label>
    </div>
    <button type="submit" disabled=${busy} data-testid="price-submit">Price</button>
    <${Notice} notice=${notice} />
    ${
      priced &&
      html`<div data-testid="price-result">
        <p class="total">
          Total <b data-testid="price-total">${money(priced.currency, priced.total_cost.incl_vat)}</b>
          <span class="muted"> incl. VAT (${money(priced.currency, priced.total_cost.excl_vat)} excl.)</span>
        </p>
        <dl class="facts">
          ${TOTALS.map(
            ([k, label]) =>
              html`<dt>${label}</dt>
                <dd>
                  ${money(priced.currency, priced[k].incl_vat)}
                  <span class="muted"> (${money(priced.currency, priced[k].excl_vat)} excl.)</span>
                </dd>`,
          )}
          <dt>Energy, time</dt>
          <dd>${priced.total_energy} kWh, ${priced.total_time} h (${priced.total_parking_time} h parked)</dd>
        </dl>
        <ul class="breakdown">
          ${priced.breakdown.periods.flatMap((p) =>
            p.dimensions.map(
              (d) =>
                html`<li>
                  ${p.local_time} ${d.type} ${d.volume}: ${money(priced.currency, d.cost.incl_vat)}
                  <span class="muted"> ${d.element ? `element ${d.element}, ` : ''}${d.reason}</span>
                </li>`,
            ),
          )}
          ${priced.breakdown.steps.map(
            (s) =>
              html`<li>
                ${s.type} step of ${s.step_size}: ${money(priced.currency, s.cost.incl_vat)}
                <span class="muted"> surplus ${s.surplus}, element ${s.element}</span>
              </li>`,
          )}
        </ul>
      </div>`
    }
  </form>`;
}

export function Tariffs({ params }) {
  const offset = Number(params.get('offset') ?? 0);
  const [{ data, error }, reload] = useLoad(
    () => page(`/v1/ocpi/tariffs${query({ offset: offset || undefined, limit: LIMIT })}`),
    [offset],
  );
  const [notice, setNotice] = useState(null);
  const done = (n, changed) => {
    setNotice(n);
    if (changed) void reload();
  };
  const total = data?.total ?? 0;
  return html`<section>
    <h1>Tariffs</h1>
    <button class="quiet" onClick=${() => void reload()}>Refresh</button>
    <${ErrorLine} error=${error} />
    <${Notice} notice=${notice} />
    ${data && total === 0 && html`<p class="muted">No tariff of ours yet: PUT one at /v1/ocpi/tariffs/{id}.</p>`}
    ${data && data.items.length > 0 && html`<${Preview} tariffs=${data.items} />`}
    <div class="tariffs" data-testid="tariffs">
      ${data?.items.map((t) => html`<${Tariff} key=${t.id} t=${t} done=${done} />`)}
    </div>
    ${
      total > LIMIT &&
      html`<nav class="pager">
        <button disabled=${offset === 0} onClick=${() => go({ offset: Math.max(0, offset - LIMIT) || undefined })}>
          ← Previous
        </button>
        <button disabled=${offset + LIMIT >= total} onClick=${() => go({ offset: offset + LIMIT })}>Next →</button>
      </nav>`
    }
  </section>`;
}
