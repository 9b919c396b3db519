// A session's page (#/sessions/{id}): what it was (charger, token, times, energy, power, cost,
// stop reason) and its energy over time from GET /v1/sessions/{id}/meter-values, drawn as SVG. A
// session event about it re-reads both, at most once a second.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { api, enc, onEvent, onResync } from './api.js';
import { fmtCost, fmtDuration, fmtKwh, fmtTime, localNumber, meanKw, sessionDurationMs } from './format.js';
import { ErrorLine, Status, useDebounced, useLoad } from './ui.js';

const H = 240;
const PAD = { left: 48, right: 48, top: 12, bottom: 28 };

/** A round step for an axis that reaches `max` in about four ticks. */
function niceStep(max) {
  if (!(max > 0)) return 1;
  const raw = max / 4;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

const hhmm = (ms) => new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
// a chart shorter than a few minutes gives its ticks seconds: five ticks of one minute read alike
const hhmmss = (ms) => new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** The width of the element (CSS pixels), followed as it changes. */
function useWidth(initial) {
  const ref = useRef(null);
  const [width, setWidth] = useState(initial);
  useEffect(() => {
    if (!ref.current || typeof ResizeObserver === 'undefined') return undefined;
    const observer = new ResizeObserver(([entry]) => {
      if (entry) setWidth(Math.max(260, Math.round(entry.contentRect.width)));
    });
    observer.observe(ref.current);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

/**
 * Energy delivered (kWh, line, left axis) and average power between readings (kW, steps, right
 * axis) against time, drawn at the width it is given, so its text stays readable on a phone.
 */
export function EnergyChart({ samples }) {
  const [ref, width] = useWidth(640);
  return html`<figure class="chart" ref=${ref}>
    ${
      samples.length < 2
        ? html`<p class="muted" data-testid="chart-empty">
            ${samples.length === 0 ? 'No meter reading yet.' : 'One reading so far: the chart needs two.'}
          </p>`
        : html`<${Chart} samples=${samples} W=${width} />`
    }
  </figure>`;
}

function Chart({ samples, W }) {
  const t = samples.map((s) => Date.parse(s.at));
  const t0 = t[0];
  const span = Math.max(1, t[t.length - 1] - t0);
  const maxKwh = Math.max(...samples.map((s) => s.energy_wh / 1000));
  const maxKw = Math.max(0, ...samples.map((s) => (s.power_w ?? 0) / 1000));
  const eStep = niceStep(maxKwh);
  const pStep = niceStep(maxKw);
  const eTop = Math.max(eStep, Math.ceil(maxKwh / eStep) * eStep);
  const pTop = Math.max(pStep, Math.ceil(maxKw / pStep) * pStep);
  const iw = W - PAD.left - PAD.right;
  const ih = H - PAD.top - PAD.bottom;
  const x = (ms) => PAD.left + ((ms - t0) / span) * iw;
  const clock = span < 5 * 60_000 ? hhmmss : hhmm;
  const yE = (v) => PAD.top + ih - (v / eTop) * ih;
  const yP = (v) => PAD.top + ih - (v / pTop) * ih;
  const energy = samples.map((s, i) => `${x(t[i]).toFixed(1)},${yE(s.energy_wh / 1000).toFixed(1)}`).join(' ');
  // the power between two readings, held from the first to the second
  let power = '';
  for (let i = 1; i < samples.length; i++) {
    const p = yP((samples[i].power_w ?? 0) / 1000).toFixed(1);
    power += `${x(t[i - 1]).toFixed(1)},${p} ${x(t[i]).toFixed(1)},${p} `;
  }
  const ticks = [];
  for (let v = 0; v <= eTop + 1e-9; v += eStep) ticks.push(v);
  const pTicks = [];
  for (let v = 0; v <= pTop + 1e-9; v += pStep) pTicks.push(v);
  const times = (W < 480 ? [0, 0.5, 1] : [0, 0.25, 0.5, 0.75, 1]).map((f) => t0 + f * span);
  const digits = (step) => (step >= 1 ? 0 : Math.min(3, Math.ceil(-Math.log10(step))));
  return html`<div data-testid="energy-chart" data-points=${samples.length}>
    <svg viewBox=${`0 0 ${W} ${H}`} width=${W} height=${H} role="img" aria-label="energy and power over time">
      ${ticks.map(
        (v) =>
          html`<line class="grid" x1=${PAD.left} x2=${W - PAD.right} y1=${yE(v)} y2=${yE(v)} />
            <text class="axis" x=${PAD.left - 6} y=${yE(v) + 4} text-anchor="end">${v.toFixed(digits(eStep))}</text>`,
      )}
      ${pTicks.map(
        (v) => html`<text class="axis power" x=${W - PAD.right + 6} y=${yP(v) + 4}>${v.toFixed(digits(pStep))}</text>`,
      )}
      ${times.map((ms) => html`<text class="axis" x=${x(ms)} y=${H - 8} text-anchor="middle">${clock(ms)}</text>`)}
      <polyline class="power" points=${power.trim()} data-testid="power-line" />
      <polyline class="energy" points=${energy} data-testid="energy-line" />
    </svg>
    <p class="muted">
      <span class="key energy"></span> energy (kWh, left) <span class="key power"></span> average power between readings
      (kW, right)
    </p>
  </div>`;
}

export function SessionPage({ id }) {
  const [{ data: s, error }, reload] = useLoad(() => api('GET', `/v1/sessions/${enc(id)}`), [id]);
  const [{ data: meter, error: meterError }, reloadMeter] = useLoad(
    () => api('GET', `/v1/sessions/${enc(id)}/meter-values`),
    [id],
  );
  const soon = useDebounced(() => (reload(), reloadMeter()), 1000);
  useEffect(() => onEvent((e) => e.type === 'session' && e.session_id === id && soon('session')), [id]);
  useEffect(() => onResync(() => soon('session')), [id]);
  if (!s)
    return html`<section>
      <h1>Session</h1>
      <${ErrorLine} error=${error} />
    </section>`;
  return html`<section data-testid="session">
    <p><a href=${`#/sessions?charge_point_id=${enc(s.charge_point_id)}`}>← Sessions of ${s.charge_point_id}</a></p>
    <h1>Session ${s.transaction_id} <${Status} status=${s.status} /></h1>
    <div class="grid">
      <div class="card">
        <h2>Session</h2>
        <dl class="facts" data-testid="session-facts">
          <dt>Charge point</dt>
          <dd><a href=${`#/chargers/${enc(s.charge_point_id)}`}>${s.charge_point_id}</a> (${s.protocol})</dd>
          <dt>EVSE / connector</dt>
          <dd>${s.evse_id} / ${s.connector_id}</dd>
          <dt>Token</dt>
          <dd>${s.id_tag ?? ''}</dd>
          <dt>Started</dt>
          <dd>${fmtTime(s.started_at)}</dd>
          <dt>Ended</dt>
          <dd>${s.stopped_at ? fmtTime(s.stopped_at) : 'running'}</dd>
          <dt>Duration</dt>
          <dd>${fmtDuration(sessionDurationMs(s))}</dd>
          <dt>Energy</dt>
          <dd data-testid="energy">${fmtKwh(s.energy_wh)} kWh</dd>
          <dt>Mean power</dt>
          <dd>${meanKw(s) ? `${localNumber(meanKw(s))} kW` : ''}</dd>
          <dt>Meter</dt>
          <dd>${s.meter_start_wh ?? '?'} → ${s.meter_last_wh ?? '?'} Wh</dd>
          <dt>Cost (incl. VAT)</dt>
          <dd data-testid="cost">${fmtCost(s.cost)}${s.cdr_id ? ` (CDR ${s.cdr_id})` : ''}</dd>
          <dt>Stop reason</dt>
          <dd>${s.stop_reason ?? ''}</dd>
          <dt>Stopped by</dt>
          <dd>${s.stop_id_tag ?? ''}</dd>
          <dt>Remote start</dt>
          <dd>${s.remote_start_command_id ?? ''}</dd>
        </dl>
      </div>
      <div class="card wide">
        <h2>Energy over time</h2>
        <${ErrorLine} error=${meterError} />
        ${meter && html`<${EnergyChart} samples=${meter.samples} />`}
      </div>
    </div>
  </section>`;
}
