import { expect } from 'chai';
import { summaryLines, verdicts, type SummaryInput } from '../../scripts/load-test/summary.js';

/** The load test's ending: one verdict per documented aim, n/a where the run cannot tell. */
describe('load test summary', () => {
  const run = (over: Partial<SummaryInput> = {}, ocpp: Partial<SummaryInput['ocpp']> = {}): SummaryInput => ({
    chargers: 10_000,
    rampS: 0,
    ocpp: {
      connected: 10_000,
      ready: 10_000,
      bootStormSeconds: 19.1,
      messagesPerSecondWhileHeld: 900,
      latencyMs: { p50: 1, p99: 178 },
      errors: 0,
      disconnects: 0,
      serverBytesPerCharger: 8_515,
      settledRssBytesPerConnection: 6_565,
      ...ocpp,
    },
    memoryRatioAfterGc: 2.35,
    ...over,
  });
  const outcomes = (r: SummaryInput) => verdicts(r).map((v) => v.outcome);

  it('passes a boot storm of 10,000 under 60 s within 3x memory with nothing lost', () => {
    expect(outcomes(run())).to.deep.equal(['PASS', 'PASS', 'PASS']);
    expect(summaryLines(run()).at(-1)).to.equal('verdict: every aim that applies is met');
  });

  it('fails what is missed and says which', () => {
    const r = run({ memoryRatioAfterGc: 4.65 }, { bootStormSeconds: 62, ready: 9_990, errors: 3 });
    expect(outcomes(r)).to.deep.equal(['FAIL', 'FAIL', 'FAIL']);
    expect(summaryLines(r).at(-1)).to.equal('verdict: 3 aim(s) not met');
  });

  it('fails a run whose starts the target refused, and says what the target needs', () => {
    // a target without OCPP_UNKNOWN_ID_TAGS=accept answered every start Invalid: it said PASS
    const r = run({}, { startsRefused: 9 });
    expect(outcomes(r)).to.deep.equal(['FAIL', 'PASS', 'PASS']);
    expect(verdicts(r)[0]?.why).to.contain('9 starts refused (run the target with OCPP_UNKNOWN_ID_TAGS=accept)');
    expect(summaryLines(r).join('\n')).to.match(/starts refused\s+9/);
  });

  it('says n/a where the run cannot judge an aim, and never shows a negative memory figure', () => {
    const r = run(
      { chargers: 50, rampS: 20, memoryRatioAfterGc: -0.4 },
      { connected: 50, ready: 50, serverBytesPerCharger: -1200 },
    );
    expect(outcomes(r)).to.deep.equal(['PASS', 'n/a', 'n/a']);
    const lines = summaryLines(r).join('\n');
    expect(lines).to.contain('n/a (memory fell)');
    expect(lines).to.not.match(/-\d/);
  });
});
