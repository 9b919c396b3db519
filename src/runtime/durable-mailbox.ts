import type { Logger } from 'pino';
import { repeatedErrorLog } from '../log-limit.js';
import { shardOf, type Address } from './address.js';
import { InvalidMessageError } from './errors.js';
import type { ActivationLookup } from './local-activations.js';
import type { ActorPlacement } from './placement.js';
import type { DurableSendOptions, DurableSendResult } from './protocol.js';
import type { MailboxRow, RuntimeStore } from './runtime-store.js';
import type { Transport } from './transport.js';
import type { RegisteredActor } from './types.js';

export interface DurableMailboxOptions {
  store: RuntimeStore;
  placement: ActorPlacement;
  transport: Transport;
  log: Logger;
}

/**
 * Durable messages and reminders: `sendDurable` commits a row to `actor_mailbox` (the SQL is in
 * `runtime-store.ts`) and wakes the owner; the owner hands due rows to their activations, on a
 * wake-up and on its periodic sweep, until a turn marks each done. A row is handed to one turn at
 * a time in this process; a redelivery after a crash finds it done in the database.
 */
export class DurableMailbox {
  /** rows handed to an activation whose turn has not finished */
  private readonly inFlight = new Set<string>();
  private sweeping = false;
  private stopping = false;

  /** a sweep that fails every few seconds while the database is away: a line a minute per error */
  private readonly sweepFailed: (err: unknown) => void;

  constructor(
    private readonly opts: DurableMailboxOptions,
    private readonly activations: ActivationLookup,
  ) {
    this.sweepFailed = repeatedErrorLog(opts.log, 'durable sweep failed');
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Shutdown begins: no more sweeps. */
  stop(): void {
    this.stopping = true;
  }

  /** Checks the message against its kind's schema, commits it, and wakes the owner if it is due. */
  async send(address: Address, message: unknown, opts: DurableSendOptions): Promise<DurableSendResult> {
    const kind = this.activations.kindOf(address);
    if (!kind.messages.Check(message)) {
      const first = kind.messages.Errors(message)[0];
      throw new InvalidMessageError(
        `invalid message for ${kind.def.kind}: ${first?.instancePath || '/'} ${first?.message ?? ''}`,
      );
    }
    const { placement, store } = this.opts;
    const shard = kind.def.placement === 'sharded' ? shardOf(address, placement.shardCount) : -1;
    const res = await store.enqueue(
      address,
      kind.def.kind,
      shard,
      opts.dedupeKey,
      { m: message },
      opts.notBefore ?? Date.now(),
    );
    if (!res.duplicate && (opts.notBefore ?? 0) <= Date.now()) void this.wake(address, kind.def);
    return res;
  }

  /** Drains the address here if we own it, else tells its owner to. */
  private async wake(address: Address, def: RegisteredActor): Promise<void> {
    if (this.activations.local(address) || this.opts.placement.pinLease(address)) {
      await this.drain(address);
      return;
    }
    const owner = await this.activations.ownerOf(address, def).catch(() => undefined);
    if (owner && owner !== this.opts.placement.processId)
      await this.opts.transport.send(owner, { t: 'wake', to: address });
  }

  /** Hands the due rows of one address to its activation (a wake-up, a new pin). */
  async drain(address: Address): Promise<void> {
    try {
      const rows = await this.opts.store.dueFor(address, 200);
      for (const row of rows) this.deliver(row);
    } catch (err) {
      this.opts.log.warn({ err, address }, 'could not read the durable mailbox');
    }
  }

  private deliver(row: MailboxRow): void {
    if (this.inFlight.has(row.id)) return;
    const act = this.activations.local(row.address);
    if (!act) return;
    this.inFlight.add(row.id);
    act.enqueue({ t: 'durable', row, done: () => this.inFlight.delete(row.id) });
  }

  /** Picks up due durable messages and reminders of the shards (and pins) this process owns. */
  async sweep(): Promise<void> {
    if (this.sweeping || this.stopping) return;
    this.sweeping = true;
    const { placement, store } = this.opts;
    try {
      const owned = placement.ownedShards();
      const shards = owned.length === placement.shardCount ? null : owned;
      const rows = await store.due(shards, 500);
      for (const row of rows) this.deliver(row);
      const pinned = await store.due([-1], 500);
      for (const row of pinned) if (placement.pinLease(row.address)) this.deliver(row);
    } catch (err) {
      this.sweepFailed(err);
    } finally {
      this.sweeping = false;
    }
  }
}
