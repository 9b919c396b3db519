import { expect } from 'chai';
import { FleetIndex, type FleetSource } from '../../src/csms/fleet-index.js';
import type { RegistryFacts, VersionedSummary } from '../../src/csms/fleet.js';

/** A fleet in memory: registry rows and stored states with versions; counts what the index reads. */
class FakeFleet implements FleetSource {
  readonly rows: RegistryFacts[] = [];
  readonly states = new Map<string, { version: number; status: string }>();
  readonly summariesRead: string[][] = [];
  /** holds stateVersions until released, to line refreshes up */
  gate: Promise<void> | undefined;

  add(id: string, status: string): void {
    this.rows.push({ id, protocol: 'ocpp1.6', last_seen_at: null });
    this.states.set(this.addressOf(id), { version: 1, status });
  }

  report(id: string, status: string): void {
    const s = this.states.get(this.addressOf(id));
    if (s) this.states.set(this.addressOf(id), { version: s.version + 1, status });
  }

  registry = async (): Promise<RegistryFacts[]> => [...this.rows];

  stateVersions = async (): Promise<Map<string, number>> => {
    const versions = new Map([...this.states].map(([a, s]) => [a, s.version]));
    await this.gate;
    return versions;
  };

  stateSummaries = async (addresses: readonly string[]): Promise<Map<string, VersionedSummary>> => {
    this.summariesRead.push([...addresses]);
    const out = new Map<string, VersionedSummary>();
    for (const a of addresses) {
      const s = this.states.get(a);
      if (!s) continue;
      const connectors = [{ evse_id: 1, connector_id: 1, status: s.status, error_code: null, updated_at: '' }];
      out.set(a, {
        version: s.version,
        summary: { protocol: 'ocpp1.6', vendor: 'V', model: 'M', connectors, open_transactions: 0 },
      });
    }
    return out;
  };

  /** the pins anywhere; undefined: Redis cannot be reached */
  pinnedAnywhere: Set<string> | undefined = undefined;
  /** the pins of this process */
  readonly here = new Set<string>();

  pinnedAmong = async (addresses: readonly string[]): Promise<Set<string>> => {
    const pinned = this.pinnedAnywhere;
    if (!pinned) throw Object.assign(new Error('Redis is not connected'), { name: 'DependencyDegradedError' });
    return new Set(addresses.filter((a) => pinned.has(a)));
  };
  pinnedHere = (addresses: readonly string[]): Set<string> => new Set(addresses.filter((a) => this.here.has(a)));
  /** the health probe's word on Redis */
  away = false;
  redisAway = (): boolean => this.away;
  addressOf = (id: string): string => `charge-point/${id}`;
  lastSeenHere = (): number | undefined => undefined;
}

const statusOf = (entries: { id: string; connectors: { status: string }[] }[], id: string): string | undefined =>
  entries.find((e) => e.id === id)?.connectors[0]?.status;

describe('FleetIndex (src/csms/fleet-index.ts)', () => {
  it('reads only the states whose version moved since the last refresh', async () => {
    const fleet = new FakeFleet();
    for (let i = 1; i <= 20; i++) fleet.add(`CP-${i}`, 'Available');
    const index = new FleetIndex(fleet);
    expect((await index.entries()).entries).to.have.length(20);
    expect(fleet.summariesRead.flat()).to.have.length(20);

    fleet.summariesRead.length = 0;
    await index.entries();
    expect(fleet.summariesRead).to.deep.equal([]);

    fleet.report('CP-7', 'Faulted');
    const { entries } = await index.entries();
    expect(fleet.summariesRead).to.deep.equal([['charge-point/CP-7']]);
    expect(statusOf(entries, 'CP-7')).to.equal('Faulted');
  });

  it('orders ids naturally and keeps a removed charger out', async () => {
    const fleet = new FakeFleet();
    for (const id of ['CP-10', 'CP-2', 'cp-1', 'CP-1']) fleet.add(id, 'Available');
    const index = new FleetIndex(fleet);
    const ranked = (await index.entries()).entries.sort((x, y) => x.rank - y.rank).map((e) => e.id);
    expect(ranked).to.deep.equal(['CP-1', 'cp-1', 'CP-2', 'CP-10']);
    fleet.rows.splice(
      fleet.rows.findIndex((r) => r.id === 'CP-2'),
      1,
    );
    expect((await index.entries()).entries.map((e) => e.id)).to.deep.equal(['CP-10', 'cp-1', 'CP-1']);
  });

  it("counts online every process's chargers, and while Redis is away this process's only, saying so", async () => {
    const fleet = new FakeFleet();
    for (const id of ['CP-1', 'CP-2', 'CP-3']) fleet.add(id, 'Available');
    fleet.pinnedAnywhere = new Set(['charge-point/CP-1', 'charge-point/CP-2']);
    fleet.here.add('charge-point/CP-2');
    const index = new FleetIndex(fleet);
    const online = (read: { entries: Array<{ id: string; online: boolean }> }) =>
      read.entries.filter((e) => e.online).map((e) => e.id);
    const all = await index.entries();
    expect(all.online_scope).to.equal('cluster');
    expect(online(all)).to.deep.equal(['CP-1', 'CP-2']);
    fleet.pinnedAnywhere = undefined;
    const partial = await index.entries();
    expect(partial.online_scope).to.equal('this_process');
    expect(online(partial)).to.deep.equal(['CP-2']);
    // a Redis that takes connections and does not answer: this process's pins after a bound
    fleet.pinnedAmong = () => new Promise<Set<string>>(() => undefined);
    const hung = await index.entries();
    expect([hung.online_scope, online(hung)]).to.deep.equal(['this_process', ['CP-2']]);
    // the probe finds it away: Redis is not asked at all
    fleet.away = true;
    fleet.pinnedAmong = async () => {
      throw new Error('asked while the probe finds Redis away');
    };
    expect((await index.entries()).online_scope).to.equal('this_process');
    fleet.away = false;
    // any other failure is no outage: it is not hidden
    fleet.pinnedAmong = async () => {
      throw new TypeError('a bug');
    };
    let failed: unknown;
    await index.entries().catch((err: unknown) => (failed = err));
    expect(failed).to.be.instanceOf(TypeError);
  });

  it('makes a request that arrives during a refresh wait for one that starts after it', async () => {
    const fleet = new FakeFleet();
    fleet.add('CP-1', 'Available');
    const index = new FleetIndex(fleet);
    await index.entries();

    let release = (): void => undefined;
    fleet.gate = new Promise<void>((r) => (release = r));
    // this refresh has read the versions (Available) and waits
    const early = index.entries();
    await new Promise((r) => setImmediate(r));
    fleet.gate = undefined;
    fleet.report('CP-1', 'Faulted');
    const late = index.entries();
    const alsoLate = index.entries();
    release();
    expect(statusOf((await early).entries, 'CP-1')).to.equal('Available');
    expect(statusOf((await late).entries, 'CP-1')).to.equal('Faulted');
    expect(statusOf((await alsoLate).entries, 'CP-1')).to.equal('Faulted');
    // the late ones shared one refresh
    expect(fleet.summariesRead).to.deep.equal([['charge-point/CP-1'], ['charge-point/CP-1']]);
  });
});
