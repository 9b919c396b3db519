// The fleet overview: counts from GET /v1/fleet (one cheap call), refreshed at most once a
// second while events arrive, and the alerts: connectors faulted or reporting an error code.
import { useEffect } from 'preact/hooks';
import { html } from './html.js';
import { api, enc, onEvent, onResync } from './api.js';
import { fmtTime } from './format.js';
import { ErrorLine, FaultText, OnlineScopeNote, Status, useDebounced, useLoad, useOnlineReload } from './ui.js';

function Count({ name, value, href, tone }) {
  return html`<a class=${`count ${tone ?? ''}`} href=${href} data-testid=${`count-${name}`}
    ><b data-testid="value">${value ?? '…'}</b><span>${name}</span></a
  >`;
}

export function Overview() {
  const [{ data: fleet, error }, reload] = useLoad(() => api('GET', '/v1/fleet?alerts=50'), []);
  const soon = useDebounced(() => void reload(), 1000);
  useEffect(() => onEvent(() => soon('fleet')), []);
  useEffect(() => onResync(() => soon('fleet')), []);
  useOnlineReload(fleet?.online_scope, reload);
  return html`<section>
    <h1>Fleet</h1>
    <${ErrorLine} error=${error} />
    <${OnlineScopeNote} scope=${fleet?.online_scope} />
    <div class="counts">
      <${Count} name="total" value=${fleet?.total} href="#/chargers" />
      <${Count} name="online" value=${fleet?.online} href="#/chargers?online=true" tone="ok" />
      <${Count} name="offline" value=${fleet?.offline} href="#/chargers?online=false" tone="off" />
      <${Count} name="charging" value=${fleet?.charging} href="#/chargers?state=charging" tone="busy" />
      <${Count} name="faulted" value=${fleet?.faulted} href="#/chargers?state=faulted" tone="bad" />
    </div>
    ${
      fleet &&
      html`<p class="muted">
        ${Object.entries(fleet.by_protocol)
          .map(([p, n]) => `${n} on ${p}`)
          .join(' · ')}
        ${
          Object.keys(fleet.connectors_by_status).length > 0 &&
          html` — connectors:
          ${Object.entries(fleet.connectors_by_status).map(([s, n]) => html` <${Status} status=${s} /> ${n}`)}`
        }
      </p>`
    }
    <h2>Alerts ${fleet && html`<span class="muted">(${fleet.alerts_total})</span>`}</h2>
    ${fleet && fleet.alerts.length === 0 && html`<p class="muted">No connector reports a fault.</p>`}
    <ul class="alerts" data-testid="alerts">
      ${fleet?.alerts.map(
        (a) =>
          html`<li data-testid=${`alert-${a.charge_point_id}`}>
            <a href=${`#/chargers/${enc(a.charge_point_id)}`}>${a.charge_point_id}</a>${' '}
            <span>
              ${a.evse_id === 0 && a.connector_id === 0 ? 'the whole charger' : `EVSE ${a.evse_id}, connector ${a.connector_id}`}
            </span>
            <${Status} status=${a.status} error=${a.error_code} /><${FaultText} c=${a} />
            ${!a.online && html`<span class="muted"> (offline, last report)</span>`}
            <span class="muted"> ${fmtTime(a.updated_at)}</span>
          </li>`,
      )}
    </ul>
  </section>`;
}
