import type { ProtocolName } from '../ocpp/domain.js';
import { onlineAmong, type OnlineScope, type OnlineSource } from './online.js';
import { fleetEntry, naturalIdOrder, type FleetEntry, type RegistryFacts, type VersionedSummary } from './fleet.js';

/** What the index reads; each a query (or a pin lookup) over the whole fleet, none per charger. */
export interface FleetSource extends OnlineSource {
  /** every registered charger (charge-point-store.ts registryFacts) */
  registry(): Promise<RegistryFacts[]>;
  /** the version of every charge-point actor's stored state, by address */
  stateVersions(): Promise<Map<string, number>>;
  /** these states read, parsed and summarized, with the version read */
  stateSummaries(addresses: readonly string[]): Promise<Map<string, VersionedSummary>>;
  addressOf(id: string): string;
  /** when this process's connection of the charger last received a frame */
  lastSeenHere(id: string): number | undefined;
}

/** The fleet as the index holds it now, and whose connections its `online` counts. */
export interface FleetRead {
  entries: FleetEntry[];
  online_scope: OnlineScope;
}

/**
 * The fleet index of one process (docs/CSMS.md "Fleet index"). The registry and the pins are read
 * per request, as before; what was costly, every stored state parsed and summarized per request,
 * is kept here and refreshed per request from the database by version (`actor_state.version`,
 * m0020): one query reads the versions, and only states whose version moved since the last
 * refresh are read and parsed again. A change another process committed is therefore seen by the
 * next request here; no event of our own is trusted to say what changed.
 *
 * Refreshes run one at a time: a request that arrives while one runs waits for the next one,
 * which starts after it arrived (the one running may have read the versions before a change it
 * must see). Requests arriving together share that next refresh.
 */
export class FleetIndex {
  private readonly summaries = new Map<string, VersionedSummary>();
  private order = new Map<string, number>();
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(private readonly source: FleetSource) {}

  /**
   * Every registered charger (of `protocol`: the version it last spoke, else the one it is
   * registered with, as its entry says) as the index holds it now. While Redis cannot be reached
   * (cluster mode), `online` is what this process knows (online.ts): its own chargers are
   * online, the others' are not known and shown offline, and the answer says so
   * (`online_scope`), rather than no answer at all while an operator most needs one.
   */
  async entries(protocol?: ProtocolName): Promise<FleetRead> {
    const [rows] = await Promise.all([this.source.registry(), this.refresh()]);
    const spoken = (r: (typeof rows)[number]): ProtocolName =>
      this.summaries.get(this.source.addressOf(r.id))?.summary?.protocol ?? r.protocol;
    const chosen = protocol === undefined ? rows : rows.filter((r) => spoken(r) === protocol);
    const addresses = chosen.map((r) => this.source.addressOf(r.id));
    // the summaries as this refresh left them: a later refresh may run while the pins are read
    const summaries = addresses.map((a) => this.summaries.get(a)?.summary);
    const { pinned, scope } = await onlineAmong(this.source, addresses);
    const order = this.orderOf(rows);
    const entries = chosen.map((row, i) =>
      fleetEntry(
        row,
        order.get(row.id) ?? 0,
        pinned.has(addresses[i] ?? ''),
        summaries[i],
        this.source.lastSeenHere(row.id),
      ),
    );
    return { entries, online_scope: scope };
  }

  /** Brings the summaries up to the database's versions as of a read that starts after this call. */
  refresh(): Promise<void> {
    if (!this.running) {
      const run = this.readChanged().finally(() => {
        this.running = undefined;
      });
      this.running = run;
      return run;
    }
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.refresh();
      });
    return this.queued;
  }

  private async readChanged(): Promise<void> {
    const versions = await this.source.stateVersions();
    const changed: string[] = [];
    for (const [address, version] of versions)
      if (this.summaries.get(address)?.version !== version) changed.push(address);
    // rows of actor_state are not deleted (a removed charger's state is reset); this keeps the
    // cache to what the table holds should one ever be
    for (const address of this.summaries.keys()) if (!versions.has(address)) this.summaries.delete(address);
    if (changed.length === 0) return;
    for (const [address, read] of await this.source.stateSummaries(changed)) {
      const held = this.summaries.get(address);
      // versions only rise: a state read at a later version than the scan's is kept, never an older one
      if (!held || held.version < read.version) this.summaries.set(address, read);
    }
  }

  /** Natural id order, sorted again only when the registry holds an id it does not know or lost one. */
  private orderOf(rows: readonly RegistryFacts[]): Map<string, number> {
    if (rows.length !== this.order.size || rows.some((r) => !this.order.has(r.id)))
      this.order = naturalIdOrder(rows.map((r) => r.id));
    return this.order;
  }
}
