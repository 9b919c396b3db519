import { expect } from 'chai';
import { PlatformMetrics } from '../../src/metrics.js';

/** The per-turn metrics add to plain numbers; /metrics must still read as prom-client's own. */
describe('per-turn and per-request metrics', () => {
  const collect = { activations: () => 3, ownedShards: () => 256 };
  const lines = (text: string, prefix: string): string[] => text.split('\n').filter((l) => l.startsWith(prefix));

  it('serves turn counts and a cumulative duration histogram per kind, and keeps counting across scrapes', async () => {
    const m = new PlatformMetrics(collect);
    m.observeTurn('charge-point', 'ok', 0.0004);
    m.observeTurn('charge-point', 'ok', 0.003);
    m.observeTurn('charge-point', 'fenced', 7);
    m.observeTurn('partner', 'error', 0.02);
    const text = (await m.exposition()).body;
    expect(text).to.contain('# TYPE actor_turn_duration_seconds histogram');
    expect(lines(text, 'actor_turns_total{')).to.have.members([
      'actor_turns_total{kind="charge-point",outcome="ok"} 2',
      'actor_turns_total{kind="charge-point",outcome="fenced"} 1',
      'actor_turns_total{kind="partner",outcome="error"} 1',
    ]);
    const cp = lines(text, 'actor_turn_duration_seconds').filter((l) => l.includes('kind="charge-point"'));
    expect(cp).to.include('actor_turn_duration_seconds_bucket{le="0.001",kind="charge-point"} 1');
    expect(cp).to.include('actor_turn_duration_seconds_bucket{le="0.005",kind="charge-point"} 2');
    expect(cp).to.include('actor_turn_duration_seconds_bucket{le="5",kind="charge-point"} 2');
    expect(cp).to.include('actor_turn_duration_seconds_bucket{le="+Inf",kind="charge-point"} 3');
    expect(cp).to.include('actor_turn_duration_seconds_count{kind="charge-point"} 3');
    expect(cp.find((l) => l.startsWith('actor_turn_duration_seconds_sum'))).to.equal(
      `actor_turn_duration_seconds_sum{kind="charge-point"} ${0.0004 + 0.003 + 7}`,
    );

    m.observeTurn('charge-point', 'ok', 0.0001);
    const again = (await m.exposition()).body;
    expect(again).to.contain('actor_turns_total{kind="charge-point",outcome="ok"} 3');
    expect(again).to.contain('actor_turn_duration_seconds_count{kind="charge-point"} 4');
    expect(m.actorTurns.count({ outcome: 'fenced' })).to.equal(1);
    expect(m.actorTurns.count({ kind: 'charge-point' })).to.equal(4);

    m.observeRequest('GET', '/ocpi/cpo/2.2.1/locations', 200, 0.003);
    m.observeRequest('GET', '/ocpi/cpo/2.2.1/locations', 200, 0.2);
    const http = lines((await m.exposition()).body, 'http_request_duration_seconds');
    const labels = 'method="GET",route="/ocpi/cpo/2.2.1/locations",status="200"';
    expect(http).to.include(`http_request_duration_seconds_bucket{le="0.005",${labels}} 1`);
    expect(http).to.include(`http_request_duration_seconds_bucket{le="0.25",${labels}} 2`);
    expect(http).to.include(`http_request_duration_seconds_count{${labels}} 2`);

    // a turn not read yet goes with the reset too, and a duration that is not a number is dropped
    m.observeTurn('charge-point', 'ok', 0.001);
    m.observeTurn('charge-point', 'ok', Number.NaN);
    (await m.registry()).resetMetrics();
    const cleared = (await m.exposition()).body;
    expect(lines(cleared, 'actor_turn_duration_seconds_count')).to.deep.equal([]);
    expect(lines(cleared, 'actor_turns_total{')).to.deep.equal([]);
    m.observeTurn('partner', 'ok', Number.POSITIVE_INFINITY);
    const after = (await m.exposition()).body;
    expect(after).to.contain('actor_turns_total{kind="partner",outcome="ok"} 1');
    expect(lines(after, 'actor_turn_duration_seconds_count')).to.deep.equal([]);
  });

  it('counts process CPU seconds from the process start, not from the first scrape (prom-client loads with it)', async () => {
    const m = new PlatformMetrics(collect);
    const before = process.cpuUsage();
    const text = (await m.exposition()).body;
    const value = (name: string): number => {
      const line = lines(text, `${name} `)[0];
      expect(line, name).to.be.a('string');
      return Number(line?.split(' ')[1]);
    };
    // this process has used far more than a few ms of CPU by now (loading mocha and the suite):
    // counted from the first scrape, prom-client's own counters said a few ms
    expect(value('process_cpu_user_seconds_total')).to.be.at.least(before.user / 1e6);
    expect(value('process_cpu_system_seconds_total')).to.be.at.least(before.system / 1e6);
    expect(value('process_cpu_seconds_total')).to.be.at.least((before.user + before.system) / 1e6);
    expect(text).to.contain('# TYPE process_cpu_seconds_total counter');
    // and it keeps counting at the next scrape
    const spin = performance.now();
    while (performance.now() - spin < 50);
    const again = (await m.exposition()).body;
    const total = Number(lines(again, 'process_cpu_seconds_total ')[0]?.split(' ')[1]);
    expect(total).to.be.greaterThan(value('process_cpu_seconds_total'));
  });
});
