/**
 * The load test's ending for people (docs/PERFORMANCE.md "Load test"): a table of the figures and
 * one PASS / FAIL / n/a line per documented aim. `--json` prints the result object instead.
 */

/** The figures of the OCPP phase that the summary reads (see ocppPhase in load-test.ts). */
export interface SummaryInput {
  chargers: number;
  rampS: number;
  ocpp: {
    connected: number;
    ready: number;
    bootStormSeconds: number | null;
    messagesPerSecondWhileHeld: number;
    latencyMs: { p50: number; p99: number };
    errors: number;
    disconnects: number;
    /** starts whose id tag the target refused */
    startsRefused?: number;
    serverBytesPerCharger: number;
    settledRssBytesPerConnection?: number;
  };
  memoryRatio?: number;
  memoryRatioAfterGc?: number;
}

interface Verdict {
  aim: string;
  outcome: 'PASS' | 'FAIL' | 'n/a';
  why: string;
}

/** The documented aims: boot storm under 60 s for 10,000 chargers, memory at most 3x a bare socket's, nothing lost. */
export function verdicts(r: SummaryInput): Verdict[] {
  const storm = r.ocpp.bootStormSeconds;
  const stormAim: Verdict =
    r.rampS > 0 || r.chargers < 10_000
      ? { aim: 'boot storm of 10,000 under 60 s', outcome: 'n/a', why: 'needs --chargers 10000 --ramp 0' }
      : storm === null
        ? { aim: 'boot storm of 10,000 under 60 s', outcome: 'FAIL', why: 'not every charger booted' }
        : {
            aim: 'boot storm of 10,000 under 60 s',
            outcome: storm < 60 ? 'PASS' : 'FAIL',
            why: `${storm.toFixed(1)} s`,
          };
  const ratio = r.memoryRatioAfterGc ?? r.memoryRatio;
  const memoryAim: Verdict =
    ratio === undefined
      ? { aim: 'memory per connection at most 3x bare ws', outcome: 'n/a', why: 'needs --baseline' }
      : ratio < 0
        ? { aim: 'memory per connection at most 3x bare ws', outcome: 'n/a', why: 'memory fell during the run' }
        : {
            aim: 'memory per connection at most 3x bare ws',
            outcome: ratio <= 3 ? 'PASS' : 'FAIL',
            why: `${ratio.toFixed(2)}x${r.memoryRatioAfterGc === undefined ? '' : ' after a forced GC'}`,
          };
  const all = r.ocpp.connected === r.chargers && r.ocpp.ready === r.chargers;
  const refused = r.ocpp.startsRefused ?? 0;
  const lossAim: Verdict = {
    aim: 'every charger connected and booted, no error',
    outcome: all && r.ocpp.errors === 0 && refused === 0 ? 'PASS' : 'FAIL',
    why:
      `${r.ocpp.ready}/${r.chargers} booted, ${r.ocpp.errors} errors, ${r.ocpp.disconnects} disconnects` +
      // the transactions ran on refused tags: the target lets in none of the test's (README)
      (refused > 0 ? `, ${refused} starts refused (run the target with OCPP_UNKNOWN_ID_TAGS=accept)` : ''),
  };
  return [lossAim, stormAim, memoryAim];
}

const kb = (bytes: number | undefined): string =>
  bytes === undefined ? 'n/a' : bytes < 0 ? 'n/a (memory fell)' : `${(bytes / 1024).toFixed(1)} KB`;

/** The summary as lines: figures, then one line per aim, then the overall verdict. */
export function summaryLines(r: SummaryInput): string[] {
  const rows: Array<[string, string]> = [
    ['chargers connected / booted', `${r.ocpp.connected} / ${r.ocpp.ready} of ${r.chargers}`],
    ['boot storm', r.ocpp.bootStormSeconds === null ? 'n/a' : `${r.ocpp.bootStormSeconds.toFixed(1)} s`],
    ['messages per second (held)', String(r.ocpp.messagesPerSecondWhileHeld)],
    ['latency p50 / p99', `${r.ocpp.latencyMs.p50} ms / ${r.ocpp.latencyMs.p99} ms`],
    ['errors / disconnects', `${r.ocpp.errors} / ${r.ocpp.disconnects}`],
    ['starts refused', String(r.ocpp.startsRefused ?? 0)],
    ['server memory per charger', kb(r.ocpp.serverBytesPerCharger)],
    ['  after a forced GC', kb(r.ocpp.settledRssBytesPerConnection)],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const checks = verdicts(r);
  const failed = checks.filter((v) => v.outcome === 'FAIL').length;
  return [
    '',
    ...rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`),
    '',
    ...checks.map((v) => `${v.outcome.padEnd(4)}  ${v.aim} (${v.why})`),
    '',
    failed === 0 ? 'verdict: every aim that applies is met' : `verdict: ${failed} aim(s) not met`,
  ];
}
