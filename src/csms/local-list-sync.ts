import type { Logger } from '../logger.js';
import type { ChargerCommand, LocalListEntry, ProtocolName } from '../ocpp/domain.js';
import { Periodic } from '../periodic.js';
import { localListUpdates, wantedFor, type HeldList } from './local-list.js';

export interface LocalListSweepOptions {
  /** the chargers connected to this process and their versions */
  connected(): Array<[string, ProtocolName]>;
  held(id: string): Promise<HeldList>;
  wanted(): Promise<LocalListEntry[]>;
  /** queues a command on the charger's actor */
  send(id: string, command: ChargerCommand): Promise<unknown>;
  log: Logger;
  /** OCPP_LOCAL_LIST_SYNC_S in ms; 0: no sweep */
  intervalMs: number;
}

/**
 * Keeps the local lists of the chargers connected to this process in sync with the platform's
 * tokens (docs/CSMS.md "Local authorization list"): every OCPP_LOCAL_LIST_SYNC_S, the wanted list
 * is built once and each charger whose held list differs is sent the difference, as the operator's
 * sync-local-list would. Each process sweeps its own chargers, so none is swept twice.
 */
export class LocalListSweep {
  private readonly periodic: Periodic<void>;

  constructor(private readonly opts: LocalListSweepOptions) {
    this.periodic = new Periodic(() => this.pass(), {
      intervalMs: opts.intervalMs,
      log: opts.log,
      what: 'local-list sweep',
      idle: undefined,
    });
  }

  start(): void {
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One pass over the connected chargers (a pass still running is not started again). */
  sweep(): Promise<void> {
    return this.periodic.run();
  }

  private async pass(): Promise<void> {
    const chargers = this.opts.connected();
    if (chargers.length === 0) return;
    const tokens = await this.opts.wanted();
    let sent = 0;
    for (const [id, protocol] of chargers) {
      const updates = localListUpdates(await this.opts.held(id), wantedFor(protocol, tokens));
      for (const u of updates) {
        // a charger gone meanwhile, or its actor unreachable: the next pass tries again
        const queued = await this.opts.send(id, { kind: 'send-local-list', ...u }).then(
          () => true,
          () => false,
        );
        if (!queued) break;
        sent += 1;
      }
    }
    if (sent > 0) this.opts.log.info({ chargers: chargers.length, updates: sent }, 'local lists brought in sync');
  }
}
