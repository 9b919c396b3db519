// CDRs: those our chargers' roamed sessions produced (GET /v1/cdrs, newest first), with their
// totals and the eMSP each went to; and our re-pricing of the CDRs partner CPOs sent us
// (GET /v1/cdr-checks), the disagreements first.
import { useState } from 'preact/hooks';
import { html } from './html.js';
import { api, enc, failureText, page, query } from './api.js';
import { cents, fmtTime, localNumber } from './format.js';
import { ErrorLine, Notice, Status, rangeText, useLoad, useOneAtATime } from './ui.js';

const LIMIT = 50;

const go = (f) => {
  location.hash = `#/cdrs${query(f)}`;
};

const money = (currency, m) =>
  m ? `${currency} ${localNumber(cents(m.incl_vat ?? m.excl_vat))}${m.incl_vat == null ? ' excl. VAT' : ''}` : '';
const exclTitle = (m) => (m ? `excl. VAT ${m.excl_vat}` : '');

function Pager({ offset, total, move }) {
  if (total <= LIMIT) return null;
  return html`<nav class="pager">
    <button disabled=${offset === 0} onClick=${() => move(Math.max(0, offset - LIMIT))}>← Previous</button>
    <button disabled=${offset + LIMIT >= total} onClick=${() => move(offset + LIMIT)}>Next →</button>
  </nav>`;
}

/** Who a credit CDR goes to: the 2.2.1 links of its eMSP; a 2.1.1 link has no credit CDR. */
function recipientsText(recipients) {
  const sent = recipients.filter((r) => r.sent).map((r) => r.partner_key);
  const not = recipients.filter((r) => !r.sent).map((r) => r.partner_key);
  const parts = [];
  if (sent.length) parts.push(`sent to ${sent.join(', ')}`);
  if (not.length)
    parts.push(`not sent to ${not.join(', ')} (2.1.1 has no credit CDR: settle it with them outside OCPI)`);
  return parts.length ? parts.join('; ') : 'no registered link speaks for its eMSP: it goes to one that registers';
}

/**
 * A CDR's Credit (POST /v1/cdrs/{id}/credit), asked twice with an optional remark: a credit CDR
 * of its own id takes its amounts back at its eMSP. A credit CDR has none, nor a CDR credited
 * before (it names its credit); a refusal is the API's message.
 */
function CreditCdr({ cdr, creditedBy, done }) {
  const [asking, setAsking] = useState(false);
  const [remark, setRemark] = useState('');
  const [busy, once] = useOneAtATime();
  if (cdr.credit) return html`<span class="muted">credits ${cdr.credit_reference_id}</span>`;
  if (creditedBy) return html`<span class="muted" data-testid="credited-by">credited by ${creditedBy}</span>`;
  const send = () => {
    // as the API: no remark, or one with something in it (spaces alone are refused, not dropped)
    if (remark !== '' && remark.trim() === '') {
      done({ ok: false, text: 'A remark of spaces only is none: type why, or empty it to credit without one.' }, false);
      return;
    }
    return once(async () => {
      try {
        const made = await api('POST', `/v1/cdrs/${enc(cdr.id)}/credit`, remark ? { remark: remark.trim() } : {});
        done({ ok: true, text: `CDR ${cdr.id} credited by ${made.cdr.id}: ${recipientsText(made.recipients)}` }, true);
      } catch (err) {
        done({ ok: false, text: failureText(`Crediting CDR ${cdr.id}`, err) }, false);
      } finally {
        setAsking(false);
      }
    });
  };
  if (asking)
    return html`<span class="actions">
      <input
        aria-label="remark"
        placeholder="why (shown to the eMSP)"
        maxlength="255"
        value=${remark}
        onInput=${(e) => setRemark(e.currentTarget.value)}
        data-testid="credit-remark"
      />
      <button class="danger" disabled=${busy} data-testid="confirm-credit" onClick=${send}>Credit</button>
      <button class="quiet" disabled=${busy} onClick=${() => setAsking(false)}>Keep</button>
    </span>`;
  return html`<button class="quiet" data-testid="credit" onClick=${() => setAsking(true)}>Credit</button>`;
}

function OurCdrs({ f }) {
  const offset = Number(f.offset ?? 0);
  const [{ data, error }, reload] = useLoad(
    () => page(`/v1/cdrs${query({ offset: offset || undefined, limit: LIMIT })}`),
    [offset],
  );
  const [notice, setNotice] = useState(null);
  const done = (n, changed) => {
    setNotice(n);
    if (changed) void reload();
  };
  const total = data?.total ?? 0;
  return html`<section>
    <h2>Our CDRs</h2>
    <${Notice} notice=${notice} />
    <${ErrorLine} error=${error} />
    <p class="muted">${error ? '' : data ? rangeText(offset, data.items.length, total, 'No CDR yet.') : 'Loading…'}</p>
    <table class="list">
      <thead>
        <tr>
          <th>CDR</th>
          <th>Ended</th>
          <th>Location / EVSE</th>
          <th>Token</th>
          <th>eMSP</th>
          <th>Energy (kWh)</th>
          <th>Time (h)</th>
          <th>Cost (incl. VAT)</th>
          <th>Tariff</th>
          <th>Delivered</th>
          <th>Correction</th>
        </tr>
      </thead>
      <tbody data-testid="cdrs">
        ${data?.items.map(({ cdr, deliveries, credited_by, recipients }) => {
          const emsp = `${cdr.cdr_token.country_code}-${cdr.cdr_token.party_id}`;
          const delivered = deliveries.find((d) => d.partner_key === emsp) ?? deliveries[0];
          return html`<tr data-testid=${`cdr-${cdr.id}`}>
            <td data-label="CDR">${cdr.id}</td>
            <td data-label="Ended">${fmtTime(cdr.end_date_time)}</td>
            <td data-label="Location / EVSE">${cdr.cdr_location.id} / ${cdr.cdr_location.evse_uid}</td>
            <td data-label="Token">${cdr.cdr_token.uid}</td>
            <td data-label="eMSP" data-testid="emsp">${emsp}</td>
            <td data-label="Energy (kWh)" data-testid="energy">${cdr.total_energy}</td>
            <td data-label="Time (h)">
              ${cdr.total_time}${cdr.total_parking_time ? html` <span class="muted">(${cdr.total_parking_time} parked)</span>` : ''}
            </td>
            <td data-label="Cost (incl. VAT)" data-testid="cost" title=${exclTitle(cdr.total_cost)}>
              ${money(cdr.currency, cdr.total_cost)}
            </td>
            <td data-label="Tariff">${(cdr.tariffs ?? []).map((t) => t.id).join(', ')}</td>
            <td data-label="Delivered" data-testid="delivered">
              ${
                delivered
                  ? fmtTime(delivered.delivered_at)
                  : html`<span class="muted">${notDelivered(cdr, recipients)}</span>`
              }
            </td>
            <td data-label="Correction"><${CreditCdr} cdr=${cdr} creditedBy=${credited_by} done=${done} /></td>
          </tr>`;
        })}
      </tbody>
    </table>
    <${Pager} offset=${offset} total=${total} move=${(o) => go({ ...f, offset: o || undefined })} />
  </section>`;
}

/**
 * Why a CDR has no delivery: on its way, or, for a credit, never going (2.1.1 has no credit CDR:
 * "not yet (2.2.1 links only)" read the same for a credit waiting and for one that never goes).
 */
function notDelivered(cdr, recipients) {
  if (!cdr.credit || !recipients) return 'not yet';
  if (recipients.length === 0) return 'not yet: no link of this eMSP is registered';
  if (recipients.every((r) => !r.sent)) return 'not sent: its eMSP speaks 2.1.1, which has no credit CDRs';
  return 'not yet';
}

function Checks({ f }) {
  const status = f.check ?? 'disagrees';
  const offset = Number(f.check_offset ?? 0);
  const [{ data, error }] = useLoad(
    () =>
      page(
        `/v1/cdr-checks${query({ status: status === 'all' ? undefined : status, offset: offset || undefined, limit: LIMIT })}`,
      ),
    [status, offset],
  );
  const total = data?.total ?? 0;
  return html`<section>
    <h2>Checks of partners' CDRs</h2>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <select
        aria-label="check status"
        data-testid="check-status"
        value=${status}
        onChange=${(e) => go({ ...f, check: e.currentTarget.value, check_offset: undefined })}
      >
        <option value="disagrees">disagree with our pricing</option>
        <option value="unpriced">could not be priced</option>
        <option value="agrees">agree</option>
        <option value="all">all</option>
      </select>
    </form>
    <${ErrorLine} error=${error} />
    <p class="muted">${data ? rangeText(offset, data.items.length, total, 'No such check.') : ''}</p>
    <table class="list">
      <thead>
        <tr>
          <th>CDR</th>
          <th>Status</th>
          <th>Theirs</th>
          <th>Ours</th>
          <th>Difference</th>
          <th>Tariff</th>
          <th>Why</th>
          <th>Checked</th>
        </tr>
      </thead>
      <tbody data-testid="checks">
        ${data?.items.map(
          (c) =>
            html`<tr data-testid=${`check-${c.country_code}-${c.party_id}-${c.id}`}>
              <td data-label="CDR">${c.country_code}-${c.party_id} ${c.id} <span class="muted">${c.version}</span></td>
              <td data-label="Status"><${Status} status=${c.status} /></td>
              <td data-label="Theirs">${money(c.currency, c.theirs)}</td>
              <td data-label="Ours">${money(c.currency, c.ours)}</td>
              <td data-label="Difference" class=${c.status === 'disagrees' ? 'bad-text' : ''}>
                ${money(c.currency, c.difference)}
              </td>
              <td data-label="Tariff">${c.tariff_id ?? ''}</td>
              <td data-label="Why">${c.reason ?? ''}</td>
              <td data-label="Checked">${fmtTime(c.checked_at)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    <${Pager} offset=${offset} total=${total} move=${(o) => go({ ...f, check_offset: o || undefined })} />
  </section>`;
}

export function Cdrs({ params }) {
  const f = {
    offset: params.get('offset') || undefined,
    check: params.get('check') || undefined,
    check_offset: params.get('check_offset') || undefined,
  };
  return html`<section>
    <h1>CDRs</h1>
    <${OurCdrs} f=${f} />
    <${Checks} f=${f} />
  </section>`;
}
