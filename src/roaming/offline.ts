import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import type { ActorSystem } from '../runtime/actor-system.js';
import { chargePointProtocol } from '../../actors/charge-point/protocol.js';
import { addressOf } from '../runtime/address.js';
import { writeEvseStatus } from './bridge.js';
import { linksChanged, type EvseLinkStore } from './evse-links.js';

/**
 * Chargers that went away (docs/ROAMING.md "Status", Decision 6): the EVSEs of a linked charger
 * that has had no connection for ROAMING_OFFLINE_GRACE_MS become UNKNOWN at the partners. Every
 * web process looks every LOOK_MS (twice per grace when that is shorter), asking for the pins of
 * all linked chargers at once: it notes when it first saw a charger offline (a process that
 * starts notes it then, so the grace is never shorter than set), and writes UNKNOWN once the
 * grace has passed, at most a grace and two looks after the charger left. Looking twice per
 * grace only, a charger went UNKNOWN 7.7-10 minutes after it left with the 5-minute default. Two processes doing it at once write and queue it once: the write
 * happens only when the status differs, and a second queued push coalesces with the first.
 */
/** how often a web process looks for linked chargers without a connection (at most) */
const LOOK_MS = 30_000;
/** chargers whose last frame one statement reads */
const SEEN_CHUNK = 500;

export class OfflineWatch {
  private timer: NodeJS.Timeout | undefined;
  private readonly offlineSince = new Map<string, number>();
  private running = false;

  constructor(
    private readonly opts: {
      db: Database;
      actors: Pick<ActorSystem, 'isPinned' | 'pinnedAmong' | 'ref'>;
      links: EvseLinkStore;
      log: Logger;
      own: { country_code: string; party_id: string };
      graceMs: number;
      /** after UNKNOWN was queued: the outbox sends it now */
      queued: () => void;
    },
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(
      () => void this.look(),
      Math.max(50, Math.min(LOOK_MS, Math.floor(this.opts.graceMs / 2))),
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** When each of `ids` last sent a frame (csms_charge_point.last_seen_at), for those that have. */
  private async lastSeen(ids: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (let i = 0; i < ids.length; i += SEEN_CHUNK) {
      const chunk = ids.slice(i, i + SEEN_CHUNK);
      const rows = await this.opts.db.sql.query(
        `SELECT id, last_seen_at FROM csms_charge_point WHERE id IN (${chunk.map(() => '?').join(', ')})`,
        chunk,
      );
      for (const r of rows) if (r.last_seen_at !== null) out.set(String(r.id), Number(r.last_seen_at));
    }
    return out;
  }

  /** One look at every linked charger (exposed for tests). */
  async look(now = Date.now()): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const byCharger = await this.opts.links.all();
      for (const id of this.offlineSince.keys()) if (!byCharger.has(id)) this.offlineSince.delete(id);
      let wrote = false;
      const pinned = await this.opts.actors.pinnedAmong(
        [...byCharger.keys()].map((id) => addressOf(chargePointProtocol.kind, id)),
      );
      const offline = [...byCharger.keys()].filter((id) => !pinned.has(addressOf(chargePointProtocol.kind, id)));
      const seen = await this.lastSeen(offline.filter((id) => this.offlineSince.has(id)));
      for (const [id, links] of byCharger) {
        if (pinned.has(addressOf(chargePointProtocol.kind, id))) {
          this.offlineSince.delete(id);
          continue;
        }
        const since = this.offlineSince.get(id);
        if (since === undefined) {
          this.offlineSince.set(id, now);
          continue;
        }
        // a connection between two looks (a charger back for seconds) starts the grace again from
        // its last frame: it had counted from the first look that found the charger away
        if (now - Math.max(since, seen.get(id) ?? 0) < this.opts.graceMs) continue;
        let changed = false;
        await this.opts.db.group.run(async (tx) => {
          for (const link of links) if (await writeEvseStatus(tx, this.opts.own, link, 'UNKNOWN')) changed = true;
        });
        wrote ||= changed;
        // it came back meanwhile (its statuses restored before our UNKNOWN): restore them again
        if (changed && (await this.opts.actors.isPinned(addressOf(chargePointProtocol.kind, id))))
          await linksChanged(this.opts.actors, id);
      }
      if (wrote) this.opts.queued();
    } catch (err) {
      this.opts.log.warn({ err }, 'offline watch failed');
    } finally {
      this.running = false;
    }
  }
}
