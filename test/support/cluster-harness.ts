import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { shardOf } from '../../src/runtime/address.js';
import type { ActorSystem } from '../../src/runtime/actor-system.js';
import { PG_URL, REDIS_URL } from './databases.js';
import { waitFor } from './eventually.js';
import { startNode, type NodeProcess } from './processes.js';
import { counterProtocol } from './test-actors.js';

export const CLUSTER_NODE = resolve(import.meta.dirname, 'cluster-node.js');

export function startWorker(env: Record<string, string>): Promise<NodeProcess> {
  return startNode({ ...env, PROCESS_ROLE: 'worker' }, { entry: CLUSTER_NODE });
}

/** Which process holds each shard lease right now (undefined = free). */
export async function shardOwners(prefix: string, shards: number): Promise<Array<string | undefined>> {
  const redis = new Redis(REDIS_URL);
  try {
    const keys = Array.from({ length: shards }, (_, s) => `${prefix}:lease:${s}`);
    const values = await redis.mget(...keys);
    return values.map((v) => (v ? v.split('|')[0] : undefined));
  } finally {
    redis.disconnect();
  }
}

/** Durable increments at a steady rate to `keys` counters, remembering which were acknowledged. */
export class SteadyLoad {
  readonly acked = new Set<string>();
  sendErrors = 0;
  askOk = 0;
  askErrors = 0;
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly actors: ActorSystem,
    private readonly keys: number,
    private readonly perTick: number,
    private readonly tag: string,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      for (let i = 0; i < this.perTick; i++) {
        const n = this.seq++;
        const seq = `${this.tag}-${n}`;
        const p = this.actors
          .ref(counterProtocol, `k${n % this.keys}`)
          .sendDurable({ op: 'inc', seq, log: true, work_ms: 20 }, { dedupeKey: seq })
          .then(() => this.acked.add(seq))
          .catch(() => this.sendErrors++);
        this.track(p);
      }
      this.track(
        this.actors
          .ref(counterProtocol, `k${Math.floor(Math.random() * this.keys)}`)
          .ask({ op: 'inc', log: true, work_ms: 200 }, { timeoutMs: 3000 })
          .then(() => this.askOk++)
          .catch(() => this.askErrors++),
      );
    }, 10);
  }

  /** Waits until `n` more durable messages than now were acknowledged (the load moves on). */
  async progressed(what: string, n: number, timeoutMs = 30_000): Promise<void> {
    const from = this.acked.size;
    await waitFor(what, async () => this.acked.size >= from + n, timeoutMs);
  }

  private track(p: Promise<unknown>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await Promise.all([...this.inFlight]);
  }
}

interface TurnRow {
  id: number;
  address: string;
  fence_key: string;
  process: string;
  epoch: number;
  seq: string | null;
  started_at: number;
  ended_at: number;
  recorded_at: number;
}

export interface TurnLogReport {
  turns: number;
  activations: number;
  overlaps: string[];
  epochRegressions: string[];
  durableSeqs: Map<string, number>;
}

/**
 * Reads test_turn_log and looks for two activations of one key that overlap in time, and for a
 * commit with an older epoch after a newer one in the same shard (which fencing must prevent).
 */
export async function checkTurnLog(schema: string, shardCount: number): Promise<TurnLogReport & { rows: TurnRow[] }> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const res = await client.query(`SELECT * FROM "${schema}".test_turn_log ORDER BY id`);
    const rows: TurnRow[] = res.rows.map((r: Record<string, unknown>) => ({
      id: Number(r.id),
      address: String(r.address),
      fence_key: String(r.fence_key),
      process: String(r.process),
      epoch: Number(r.epoch),
      seq: r.seq === null ? null : String(r.seq),
      started_at: Number(r.started_at),
      ended_at: Number(r.ended_at),
      recorded_at: Number(r.recorded_at),
    }));
    const overlaps: string[] = [];
    const epochRegressions: string[] = [];
    const byAddress = new Map<string, TurnRow[]>();
    for (const r of rows) byAddress.set(r.address, [...(byAddress.get(r.address) ?? []), r]);
    let activations = 0;
    for (const [address, list] of byAddress) {
      const acts = new Map<string, { process: string; epoch: number; start: number; end: number }>();
      for (const r of list) {
        const k = `${r.process}|${r.epoch}`;
        const a = acts.get(k);
        if (!a) acts.set(k, { process: r.process, epoch: r.epoch, start: r.started_at, end: r.ended_at });
        else {
          a.start = Math.min(a.start, r.started_at);
          a.end = Math.max(a.end, r.ended_at);
        }
      }
      const sorted = [...acts.values()].sort((x, y) => x.start - y.start);
      activations += sorted.length;
      for (let i = 1; i < sorted.length; i++) {
        const prev = sorted[i - 1]!;
        const cur = sorted[i]!;
        if (cur.start < prev.end)
          overlaps.push(
            `${address}: ${prev.process}@${prev.epoch} [${prev.start},${prev.end}] overlaps ${cur.process}@${cur.epoch} [${cur.start},${cur.end}]`,
          );
        if (cur.epoch < prev.epoch) epochRegressions.push(`${address}: epoch ${cur.epoch} active after ${prev.epoch}`);
      }
    }
    const lastEpoch = new Map<number, { epoch: number; id: number }>();
    for (const r of rows) {
      const shard = shardOf(r.address, shardCount);
      const last = lastEpoch.get(shard);
      if (last && r.epoch < last.epoch)
        epochRegressions.push(
          `shard ${shard}: row ${r.id} epoch ${r.epoch} committed after row ${last.id} epoch ${last.epoch}`,
        );
      if (!last || r.epoch >= last.epoch) lastEpoch.set(shard, { epoch: r.epoch, id: r.id });
    }
    const durableSeqs = new Map<string, number>();
    for (const r of rows)
      if (r.fence_key === 'durable' && r.seq) durableSeqs.set(r.seq, (durableSeqs.get(r.seq) ?? 0) + 1);
    return { turns: rows.length, activations, overlaps, epochRegressions, durableSeqs, rows };
  } finally {
    await client.end();
  }
}

/**
 * Rows of test_turn_log a process wrote since a time (ms since the epoch): committed turns, or
 * with `fenceKey: 'started'` the turns it announced when they began.
 */
export async function turnsLoggedBy(
  schema: string,
  processId: string,
  opts: { since?: number; fenceKey?: string } = {},
): Promise<number> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const res = await client.query(
      `SELECT COUNT(*)::int AS n FROM "${schema}".test_turn_log WHERE process = $1 AND recorded_at >= $2 AND ($3::text IS NULL OR fence_key = $3)`,
      [processId, opts.since ?? 0, opts.fenceKey ?? null],
    );
    return Number((res.rows[0] as { n: number } | undefined)?.n ?? 0);
  } finally {
    await client.end();
  }
}

export async function mailboxCounts(schema: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const res = await client.query(`SELECT status, COUNT(*)::int AS n FROM "${schema}".actor_mailbox GROUP BY status`);
    return Object.fromEntries(res.rows.map((r: { status: string; n: number }) => [r.status, r.n]));
  } finally {
    await client.end();
  }
}
