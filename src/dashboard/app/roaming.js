// Roaming: the OCPI partners (GET /v1/partners) and their outbox queues (GET /v1/outbox/partners):
// pushes waiting, dead letters, the circuit breaker. Absent when the platform runs without OCPI.
import { html } from './html.js';
import { api } from './api.js';
import { fmtTime } from './format.js';
import { ErrorLine, Status, useLoad } from './ui.js';

export function Roaming() {
  const [{ data, error }, reload] = useLoad(async () => {
    const [partners, queues] = await Promise.all([api('GET', '/v1/partners'), api('GET', '/v1/outbox/partners')]);
    return { partners, queues: new Map(queues.map((q) => [`${q.partner.country_code}-${q.partner.party_id}`, q])) };
  }, []);
  return html`<section>
    <h1>Roaming</h1>
    <button class="quiet" onClick=${() => void reload()}>Refresh</button>
    <${ErrorLine} error=${error} />
    ${data && data.partners.length === 0 && html`<p class="muted">No partner registered.</p>`}
    <table class="list">
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
        ${data?.partners.map((p) => {
          const q = data.queues.get(`${p.country_code}-${p.party_id}`);
          return html`<tr data-testid=${`partner-${p.id}`}>
            <td data-label="Partner">${p.country_code}-${p.party_id} <span class="muted">${p.id}</span></td>
            <td data-label="Role">${p.role} ${p.version ?? ''}</td>
            <td data-label="State"><${Status} status=${p.status} /></td>
            <td data-label="Waiting">${q?.pending ?? 0}</td>
            <td data-label="Dead letters" class=${q?.dead ? 'bad-text' : ''}>${q?.dead ?? 0}</td>
            <td data-label="Breaker">
              ${q ? (q.breaker === 'open' ? `open until ${fmtTime(q.open_until)}` : 'closed') : ''}
            </td>
            <td data-label="Last sent">${fmtTime(q?.last_sent_at)}</td>
            <td data-label="Last error">${q?.last_error ?? ''}</td>
          </tr>`;
        })}
      </tbody>
    </table>
  </section>`;
}
