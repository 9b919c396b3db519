import { defineActor, type ActorContext } from '../../src/runtime/types.js';
import type { Courier, DeliveryOutcome, OutboxEntry, PartnerOutboxDeps } from './ports.js';
import { partnerOutboxProtocol, type FlushReply } from './protocol.js';
import { initialPartnerOutboxState, PartnerOutboxState } from './state.js';

/**
 * The partner-outbox actor (docs/ROAMING.md "The outbox"): one per partner, so one process at a
 * time sends to a partner, and a partner that does not answer holds up only its own actor. A
 * flush takes the rows due, sends them through the courier a few at a time, and settles each in
 * the turn's fenced transaction: sent rows go, failed ones are due again after a back-off or
 * become dead letters. The HTTP calls run inside the turn; a process that dies before the turn
 * commits leaves the rows due, and they are sent again (at least once).
 */

type Ctx = ActorContext<PartnerOutboxState>;

interface Tally {
  sent: number;
  failed: number;
  /** failures that say the partner is down, in this flush */
  down: number;
  consecutive: number;
  lastError: string | null;
  /** the breaker tripped during this flush: send nothing more */
  tripped: boolean;
}

function settleOne(deps: PartnerOutboxDeps, ctx: Ctx, entry: OutboxEntry, result: DeliveryOutcome, tally: Tally): void {
  if (result.outcome !== 'failed') {
    const sentAt = result.outcome === 'sent' ? result.version : undefined;
    ctx.write(deps.delivered(sentAt === undefined ? entry : { ...entry, version: sentAt }));
    if (result.outcome === 'sent') {
      tally.sent++;
      tally.consecutive = 0;
    } else ctx.log.info({ object: entry.object_key, reason: result.reason }, 'outbox row has nothing to send');
    return;
  }
  const attempts = entry.attempts + 1;
  const dead = !result.retryable || attempts >= deps.policy.maxAttempts;
  const retryInMs = deps.policy.backoffMs(attempts);
  ctx.write(
    deps.failed(entry, {
      attempts,
      next_attempt_at: Date.now() + retryInMs,
      error: result.error,
      dead,
    }),
  );
  tally.failed++;
  tally.lastError = result.error;
  if (result.partnerDown) {
    tally.consecutive++;
    tally.down++;
    if (tally.consecutive >= deps.policy.breakerThreshold) tally.tripped = true;
  } else if (result.called !== false) tally.consecutive = 0; // it answered (a refusal of this row): it is up
  // the push failure line of docs/OPERATIONS.md "Signals": the partner, the module (the row's
  // kind), the answer (HTTP status and OCPI status_code in `error`), the attempt, what comes next
  const log = {
    partner: ctx.key,
    kind: entry.kind,
    object: entry.object_key,
    attempts,
    error: result.error,
    ...(dead ? { dead_lettered: true } : { will_retry: true, retry_in_ms: retryInMs }),
  };
  if (dead) ctx.log.warn(log, 'outbox row dead-lettered');
  else ctx.log.warn(log, 'outbox row failed; will retry');
}

function deliver(courier: Courier, entry: OutboxEntry): Promise<DeliveryOutcome> {
  return courier.deliver(entry).catch((err: unknown): DeliveryOutcome => ({
    outcome: 'failed',
    error: err instanceof Error ? err.message : String(err),
    retryable: true,
    partnerDown: false,
  }));
}

/** Sends `entries` through `courier`, `concurrency` at a time, until the breaker trips. */
async function sendAll(
  deps: PartnerOutboxDeps,
  ctx: Ctx,
  courier: Courier,
  entries: OutboxEntry[],
  tally: Tally,
): Promise<void> {
  let next = 0;
  // the sends taken so far, by object: a row that follows another (a CDR its session) waits for
  // that one's send when it was taken before it, and is left due, untouched, when that one failed
  // (the next flush takes it with or after that row: OutboxStore.due) or the breaker tripped
  const taken = new Map<string, Promise<DeliveryOutcome | undefined>>();
  const worker = async (): Promise<void> => {
    for (let entry = entries[next++]; entry !== undefined && !tally.tripped; entry = entries[next++]) {
      const first = entry.follows === undefined ? undefined : taken.get(entry.follows);
      const send = (first ?? Promise.resolve(undefined)).then((before) =>
        tally.tripped || before?.outcome === 'failed' ? undefined : deliver(courier, entry),
      );
      taken.set(entry.object_key, send);
      const result = await send;
      if (result) settleOne(deps, ctx, entry, result, tally);
      else if (!tally.tripped)
        ctx.log.info({ object: entry.object_key, after: entry.follows }, 'outbox row waits for another');
    }
  };
  const workers = Math.max(1, Math.min(deps.policy.concurrency, entries.length));
  await Promise.all(Array.from({ length: workers }, worker));
}

/** Nothing can reach a partner that is not registered: the rows wait for the operator. */
function deadLetterAll(deps: PartnerOutboxDeps, ctx: Ctx, entries: OutboxEntry[], reason: string, now: number): void {
  for (const entry of entries)
    ctx.write(deps.failed(entry, { attempts: entry.attempts + 1, next_attempt_at: now, error: reason, dead: true }));
  ctx.log.warn({ partner: ctx.key, rows: entries.length, reason, dead_lettered: true }, 'outbox rows dead-lettered');
}

async function flush(deps: PartnerOutboxDeps, ctx: Ctx): Promise<FlushReply> {
  const s = ctx.state;
  const now = Date.now();
  if (s.breaker === 'open' && now < s.open_until) return { sent: 0, failed: 0, breaker: 'open' };
  const probing = s.breaker === 'open';
  const limit = probing ? 1 : deps.policy.batch;
  const entries = await deps.due(ctx.key, now, limit);
  if (entries.length === 0) return { sent: 0, failed: 0, breaker: s.breaker };
  const courier = await deps.courier(ctx.key, ctx.actors);
  if ('unavailable' in courier) {
    deadLetterAll(deps, ctx, entries, courier.unavailable, now);
    return { sent: 0, failed: entries.length, breaker: s.breaker };
  }
  const tally: Tally = {
    sent: 0,
    failed: 0,
    down: 0,
    consecutive: s.consecutive_failures,
    lastError: null,
    tripped: false,
  };
  await sendAll(deps, ctx, courier, entries, tally);
  const { policy } = deps;
  // a probe the partner answered (even with a refusal of that row) shows it is back
  const opens = tally.tripped || (probing && tally.down > 0);
  const cooldown = opens
    ? Math.min(
        policy.breakerMaxCooldownMs,
        probing ? Math.max(s.cooldown_ms * 2, policy.breakerCooldownMs) : policy.breakerCooldownMs,
      )
    : 0;
  if (opens)
    ctx.log.warn({ partner: ctx.key, cooldown_ms: cooldown, failures: tally.consecutive }, 'partner breaker open');
  else if (probing) ctx.log.info({ partner: ctx.key }, 'partner breaker closed');
  ctx.setState({
    breaker: opens ? 'open' : 'closed',
    consecutive_failures: tally.consecutive,
    open_until: opens ? Date.now() + cooldown : 0,
    cooldown_ms: cooldown,
    sent_total: s.sent_total + tally.sent,
    failed_total: s.failed_total + tally.failed,
    last_error: tally.lastError ?? s.last_error,
    last_failed_at: tally.lastError ? Date.now() : (s.last_failed_at ?? null),
    last_sent_at: tally.sent > 0 ? Date.now() : s.last_sent_at,
  });
  // a full batch went well: there may be more, send them after this turn commits
  if (!opens && entries.length === limit) {
    const self = ctx.actors.ref(partnerOutboxProtocol, ctx.key);
    ctx.afterCommit(() => self.tell({ op: 'flush' }));
  }
  return { sent: tally.sent, failed: tally.failed, breaker: opens ? 'open' : 'closed' };
}

/** The partner-outbox actor, given the outbox rows and the courier (ports.ts). */
export function partnerOutboxActor(deps: PartnerOutboxDeps) {
  return defineActor(partnerOutboxProtocol, {
    placement: 'sharded',
    state: PartnerOutboxState,
    initialState: initialPartnerOutboxState,
    handle: (ctx, msg) => {
      switch (msg.op) {
        case 'flush':
          return flush(deps, ctx);
      }
    },
  });
}
