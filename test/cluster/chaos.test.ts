import { expect } from 'chai';
import { formatReport, type ChaosReport } from '../../scripts/chaos/report.js';
import { runChaos } from '../../scripts/chaos/scenario.js';
import {
  checkLedger,
  emptyLedgerCheck,
  type ChargerLedger,
  type LedgerCheck,
  type SessionView,
} from '../../scripts/chaos/verify.js';

/**
 * Issue 7, item 7: the bounded chaos run (~60 s). Three real processes on a private
 * redis-server and a fresh schema, 24 firmware-like chargers (half 1.6, half 2.0.1) running
 * transactions; one web killed with kill -9 and restarted, the other paused past the lease TTL,
 * Redis restarted. The longer form for people is `node dist/scripts/chaos.js --minutes 5`.
 */
describe('chaos: kill -9, SIGSTOP and a Redis restart under charging load (private redis-server, real processes)', function () {
  this.timeout(180_000);
  let report: ChaosReport;

  before(async () => {
    report = await runChaos({
      chargers: 24,
      seed: 7,
      another: () => false,
      leaseTtlMs: 3000,
      warmupMs: 3000,
      redisDownMs: 3000,
      log: (line) => console.log(`    ${line}`),
    });
    for (const line of formatReport(report)) console.log(`    ${line}`);
  });

  it('no process exits except the one killed on purpose', () => {
    expect(report.crashes).to.deep.equal([]);
  });

  it('the /v1 and OCPI poller gets no 5xx (a 503 while Redis is down is degraded mode; for a charger on the paused or killed process, 503 charge_point_unreachable)', () => {
    expect(report.http.serverErrors).to.deep.equal([]);
  });

  it('every HTTP call (and the asks behind it) finishes within its bound', () => {
    expect(report.http.hangs).to.deep.equal([]);
  });

  it('every charger gets all its queued transaction messages acknowledged: none is wedged', () => {
    expect(report.notDrained).to.deep.equal([]);
  });

  it('every acknowledged start, meter value and stop is in /v1/sessions, with its energy and status', () => {
    expect(report.ledger.lost).to.deep.equal([]);
    expect(report.ledger.startsFound).to.equal(report.ledger.startsAcked).and.to.be.greaterThan(0);
    expect(report.ledger.metersFound).to.equal(report.ledger.metersAcked).and.to.be.greaterThan(0);
    expect(report.ledger.stopsFound).to.equal(report.ledger.stopsAcked);
  });

  it('no transaction has two sessions, and no session exists that a charger did not start', () => {
    expect(report.ledger.duplicates).to.deep.equal([]);
  });

  it('a Redis restart drops a connected charger at most once: no reconnect loop', () => {
    for (const f of report.faults.filter((x) => x.fault.startsWith('redis')))
      expect(f.reconnects, f.fault).to.be.at.most(f.victims);
  });

  it('every charger is back online after the faults, and the victims of each fault came back', () => {
    expect(report.onlineAtEnd).to.equal(report.chargers);
    for (const f of report.faults) expect(f.back, f.fault).to.equal(f.victims);
  });
});

/** The ledger check itself, on records made by hand: it must be able to fail. */
describe('chaos: the check of acknowledged transaction messages against /v1/sessions', () => {
  const charger: ChargerLedger = {
    identity: { id: 'CP-L', password: 'x', protocol: 'ocpp1.6' },
    drained: true,
    transactions: [
      {
        transactionId: '1',
        meterStart: 1000,
        startAcked: true,
        metersAcked: [1100, 1200],
        meterStop: 1300,
        stopAcked: true,
      },
      {
        transactionId: '2',
        meterStart: 1300,
        startAcked: true,
        metersAcked: [1400],
        meterStop: undefined,
        stopAcked: false,
      },
    ],
  };
  const session = (transaction_id: string, status: string, start: number, last: number): SessionView => ({
    transaction_id,
    status,
    meter_start_wh: start,
    meter_last_wh: last,
    energy_wh: last - start,
  });
  const check = (sessions: SessionView[]): LedgerCheck => {
    const into = emptyLedgerCheck();
    checkLedger(charger, sessions, into);
    return into;
  };

  it('passes when every acknowledged message is reflected', () => {
    const r = check([session('1', 'COMPLETED', 1000, 1300), session('2', 'ACTIVE', 1300, 1400)]);
    expect(r).to.deep.include({
      lost: [],
      duplicates: [],
      startsAcked: 2,
      startsFound: 2,
      stopsAcked: 1,
      stopsFound: 1,
      metersAcked: 3,
      metersFound: 3,
    });
  });

  it('finds a lost meter value, a lost stop and a lost start', () => {
    expect(check([session('1', 'COMPLETED', 1000, 1300), session('2', 'ACTIVE', 1300, 1300)]).lost).to.have.length(1);
    expect(check([session('1', 'ACTIVE', 1000, 1300), session('2', 'ACTIVE', 1300, 1400)]).lost).to.have.length(1);
    expect(check([session('1', 'COMPLETED', 1000, 1300)]).lost).to.have.length(1);
  });

  it('finds a second session for one transaction and a session nobody started', () => {
    const twice = check([
      session('1', 'COMPLETED', 1000, 1300),
      session('1', 'ACTIVE', 1000, 1000),
      session('2', 'ACTIVE', 1300, 1400),
    ]);
    expect(twice.duplicates).to.have.length(1);
    const stranger = check([
      session('1', 'COMPLETED', 1000, 1300),
      session('2', 'ACTIVE', 1300, 1400),
      session('3', 'ACTIVE', 1400, 1400),
    ]);
    expect(stranger.duplicates).to.have.length(1);
  });
});
