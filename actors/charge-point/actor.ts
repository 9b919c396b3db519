import { randomUUID } from 'node:crypto';
import type {
  ChargerCommand,
  ChargerEvent,
  ChargerEventOutcome,
  ConnectedReply,
  ProtocolName,
} from '../../src/ocpp/domain.js';
import type { ActorContext, DeactivationReason } from '../../src/runtime/types.js';
import { defineActor } from '../../src/runtime/types.js';
import { parseAddress, type Address } from '../../src/runtime/address.js';
import {
  chargePointProtocol,
  ChargePointState,
  type ChargePointCommandResult,
  type ChargePointMessage,
  type CommandAccepted,
  type CsmsEvent,
  type SessionWrites,
} from './protocol.js';

/** What the actor needs from the process that holds the charger's socket. */
export interface ChargePointActorDeps {
  /**
   * Sends the command as a CALL on this process's socket for the charger, in the protocol of
   * that socket; undefined when there is none. The answer is the charger's status word.
   */
  sendCommand(
    chargePointId: string,
    command: ChargerCommand,
    remoteStartId: number,
  ): { connection: string; action: string; answer: Promise<string> } | undefined;
  /** The newest connection won elsewhere (or the process stops): close ours. */
  closeSocket(chargePointId: string, reason: DeactivationReason): void;
  publish(event: CsmsEvent): void;
  /** the session rows behind GET /v1/sessions */
  sessions: SessionWrites;
  heartbeatIntervalS: number;
  /** OCPP_MAX_OPEN_TRANSACTIONS, read when a start arrives (settings exist once the platform runs) */
  maxOpenTransactions(): number;
}

/** Parses a charger's timestamp; a charger with no clock sends nonsense, then now counts. */
function epochMs(timestamp: string, fallback = Date.now()): number {
  const t = Date.parse(timestamp);
  return Number.isFinite(t) ? t : fallback;
}

const MAX_COMMAND_RECORDS = 20;
const MAX_FINISHED = 20;
/** a queued command that could not be sent for this long is dropped rather than sent late */
const COMMAND_EXPIRY_MS = 120_000;

function record(
  s: ChargePointState,
  command_id: string,
  kind: string,
  status: string,
  detail: string | null,
): ChargePointState['commands'] {
  const rest = s.commands.filter((c) => c.command_id !== command_id);
  return [...rest, { command_id, kind, status, detail, updated_at: new Date().toISOString() }].slice(
    -MAX_COMMAND_RECORDS,
  );
}

/**
 * The charge-point actor: one per charger, pinned to the process that holds its WebSocket
 * (DESIGN.md section 3). It keeps what the charger reported (boot, connector status, open
 * transactions, reservations), builds charging sessions, and queues CSMS-to-charger calls so
 * that at most one is outstanding.
 */
export function chargePointActor(deps: ChargePointActorDeps) {
  type Ctx = ActorContext<ChargePointState>;

  /** Records a command's final outcome and, after the turn commits, tells whoever asked for it. */
  function settle(
    ctx: Ctx,
    s: ChargePointState,
    call: ChargePointState['outbound'][number],
    status: string,
    detail: string | null,
  ): ChargePointState['commands'] {
    const notify = call.notify;
    if (notify) {
      const result: ChargePointCommandResult = {
        type: 'charge-point-command-result',
        charge_point_id: ctx.key,
        command_id: call.command_id,
        kind: call.command.kind,
        status,
        detail,
      };
      ctx.afterCommit(async () => {
        await ctx.actors
          .inbox<ChargePointCommandResult>(notify)
          .sendDurable(result, { dedupeKey: `charge-point-command:${call.command_id}` })
          .catch((err: unknown) => {
            ctx.log.warn({ err, notify, command_id: call.command_id }, 'command result not delivered');
          });
      });
    }
    return record(s, call.command_id, call.command.kind, status, detail);
  }

  /** Sends the head of the queue when nothing is outstanding. */
  function pump(ctx: Ctx, s: ChargePointState): ChargePointState {
    let state = s;
    const now = Date.now();
    while (state.outbound.length > 0) {
      const head = state.outbound[0]!;
      if (head.sent_at !== null) return state;
      if (now - head.queued_at > COMMAND_EXPIRY_MS) {
        state = { ...state, outbound: state.outbound.slice(1), commands: settle(ctx, state, head, 'expired', null) };
        continue;
      }
      const sent = deps.sendCommand(ctx.key, head.command, state.next_remote_start_id);
      if (!sent) return state;
      const commandId = head.command_id;
      const self = ctx.actors.ref(chargePointProtocol, ctx.key);
      sent.answer.then(
        (status) => self.tell({ type: 'answer', command_id: commandId, status, detail: null }),
        (err: unknown) =>
          self.tell({
            type: 'answer',
            command_id: commandId,
            status: err instanceof Error && err.name === 'ChargerCallTimeoutError' ? 'timeout' : 'failed',
            detail: err instanceof Error ? err.message : String(err),
          }),
      );
      return {
        ...state,
        next_remote_start_id:
          head.command.kind === 'start' ? state.next_remote_start_id + 1 : state.next_remote_start_id,
        outbound: [{ ...head, sent_at: now, connection: sent.connection }, ...state.outbound.slice(1)],
        commands: record(state, commandId, head.command.kind, 'sent', sent.action),
      };
    }
    return state;
  }

  function publish(ctx: Ctx, event: Omit<CsmsEvent, 'charge_point_id'>): void {
    ctx.afterCommit(() => deps.publish({ ...event, charge_point_id: ctx.key }));
  }

  function onEvent(ctx: Ctx, event: ChargerEvent, protocol: ProtocolName): ChargerEventOutcome {
    const s = ctx.state.protocol === protocol ? ctx.state : { ...ctx.state, protocol };
    switch (event.type) {
      case 'booted': {
        ctx.setState({
          ...s,
          boot: {
            vendor: event.vendor,
            model: event.model,
            serial_number: event.serial_number,
            firmware_version: event.firmware_version,
            booted_at: new Date().toISOString(),
          },
        });
        publish(ctx, { type: 'charge-point' });
        return { heartbeat_interval_s: deps.heartbeatIntervalS };
      }
      case 'status-changed': {
        // a repeated report of the same status (periodic, or after a reconnect) changes nothing
        const same = s.connectors.find((c) => c.evse_id === event.evse_id && c.connector_id === event.connector_id);
        if (same && same.status === event.status && same.error_code === event.error_code) return {};
        const others = s.connectors.filter(
          (c) => !(c.evse_id === event.evse_id && c.connector_id === event.connector_id),
        );
        const connectors = [
          ...others,
          {
            evse_id: event.evse_id,
            connector_id: event.connector_id,
            status: event.status,
            error_code: event.error_code,
            updated_at: event.timestamp,
          },
        ].sort((a, b) => a.evse_id - b.evse_id || a.connector_id - b.connector_id);
        ctx.setState({ ...s, connectors });
        publish(ctx, { type: 'charge-point' });
        return {};
      }
      case 'authorize-requested':
        // every token is accepted here; token checks belong to the eMSP side (OCPI real-time authorization)
        return { id_tag_status: 'Accepted' };
      case 'transaction-started': {
        const open = s.transactions.find(
          (t) =>
            t.dedupe_key === event.dedupe_key ||
            (event.transaction_id !== null && t.transaction_id === event.transaction_id),
        );
        if (open) return { transaction_id: open.transaction_id, id_tag_status: 'Accepted' };
        const done = s.finished.find(
          (f) => f.dedupe_key === event.dedupe_key || f.transaction_id === event.transaction_id,
        );
        if (done) return { transaction_id: done.transaction_id, id_tag_status: 'Accepted' };
        if (s.transactions.length >= deps.maxOpenTransactions()) {
          // Refused with status Invalid, not a CALLERROR: a CALLERROR to a transaction message
          // makes the charger send it again (1.6 TransactionMessageAttempts, 2.0.1 E13), Invalid
          // is a final answer, and a charger with StopTransactionOnInvalidId / StopTxOnInvalidId
          // ends the transaction at once. 1.6 still needs an id, so one is spent; nothing is kept.
          ctx.log.warn(
            { open: s.transactions.length, limit: deps.maxOpenTransactions() },
            'open transaction limit reached: start refused',
          );
          const refusedId = event.transaction_id ?? String(s.next_transaction_id);
          if (event.transaction_id === null) ctx.setState({ ...s, next_transaction_id: s.next_transaction_id + 1 });
          return { transaction_id: refusedId, id_tag_status: 'Invalid' };
        }
        const transactionId = event.transaction_id ?? String(s.next_transaction_id);
        const sessionId = randomUUID();
        ctx.write((em) =>
          deps.sessions.insert(em, {
            id: sessionId,
            charge_point_id: ctx.key,
            protocol,
            transaction_id: transactionId,
            evse_id: event.evse_id,
            connector_id: event.connector_id,
            id_tag: event.id_tag,
            started_at: epochMs(event.timestamp),
            meter_start_wh: event.meter_start_wh,
          }),
        );
        ctx.setState({
          ...s,
          next_transaction_id: event.transaction_id === null ? s.next_transaction_id + 1 : s.next_transaction_id,
          transactions: [
            ...s.transactions,
            {
              transaction_id: transactionId,
              session_id: sessionId,
              dedupe_key: event.dedupe_key,
              evse_id: event.evse_id,
              meter_start_wh: event.meter_start_wh,
              meter_last_wh: event.meter_start_wh,
              seq_nos: event.seq_no === null ? [] : [event.seq_no],
            },
          ],
        });
        publish(ctx, { type: 'session', session_id: sessionId });
        return { transaction_id: transactionId, id_tag_status: 'Accepted' };
      }
      case 'transaction-updated':
      case 'transaction-ended': {
        const tx = s.transactions.find((t) => t.transaction_id === event.transaction_id);
        // unknown or already finished: a retry after the end, or a transaction we never saw
        if (!tx) return { id_tag_status: 'Accepted' };
        if (event.seq_no !== null && tx.seq_nos.includes(event.seq_no)) return { id_tag_status: 'Accepted' };
        const meterStart = tx.meter_start_wh ?? event.meter_wh;
        const meterLast = event.meter_wh ?? tx.meter_last_wh;
        const energy = meterStart !== null && meterLast !== null ? Math.max(0, meterLast - meterStart) : 0;
        const ended = event.type === 'transaction-ended';
        ctx.write((em) =>
          deps.sessions.progress(em, tx.session_id, {
            meter_last_wh: meterLast,
            energy_wh: energy,
            id_tag: event.id_tag,
            ...(ended ? { stopped: { at: epochMs(event.timestamp), reason: event.reason } } : {}),
          }),
        );
        const others = s.transactions.filter((t) => t !== tx);
        ctx.setState({
          ...s,
          transactions: ended
            ? others
            : [
                ...others,
                {
                  ...tx,
                  meter_start_wh: meterStart,
                  meter_last_wh: meterLast,
                  seq_nos: event.seq_no === null ? tx.seq_nos : [...tx.seq_nos, event.seq_no],
                },
              ],
          finished: ended
            ? [...s.finished, { dedupe_key: tx.dedupe_key, transaction_id: tx.transaction_id }].slice(-MAX_FINISHED)
            : s.finished,
        });
        publish(ctx, { type: 'session', session_id: tx.session_id });
        return { id_tag_status: 'Accepted' };
      }
      case 'meter-sampled': {
        // outside a transaction a sample changes nothing the CSMS keeps
        const tx =
          event.transaction_id === null
            ? undefined
            : s.transactions.find((t) => t.transaction_id === event.transaction_id);
        if (tx) {
          return onEvent(
            ctx,
            {
              type: 'transaction-updated',
              transaction_id: tx.transaction_id,
              meter_wh: event.meter_wh,
              timestamp: event.timestamp,
              seq_no: null,
              id_tag: null,
            },
            protocol,
          );
        }
        return {};
      }
      case 'reservation-updated': {
        // 2.0.1 ReservationStatusUpdate: Expired or Removed, the reservation is over either way
        ctx.setState({ ...s, reservations: s.reservations.filter((r) => r.reservation_id !== event.reservation_id) });
        publish(ctx, { type: 'charge-point' });
        return {};
      }
    }
  }

  function onAnswer(ctx: Ctx, msg: Extract<ChargePointMessage, { type: 'answer' }>): void {
    const s = ctx.state;
    const head = s.outbound[0];
    if (!head || head.command_id !== msg.command_id) return;
    let reservations = s.reservations;
    const c = head.command;
    if (msg.status === 'Accepted' && c.kind === 'reserve') {
      reservations = [
        ...reservations.filter((r) => r.reservation_id !== c.reservation_id),
        {
          reservation_id: c.reservation_id,
          evse_id: c.evse_id ?? c.connector_id,
          id_tag: c.id_tag,
          expiry_date: c.expiry_date,
          status: 'Accepted',
        },
      ];
    }
    if (msg.status === 'Accepted' && c.kind === 'cancel-reservation') {
      reservations = reservations.filter((r) => r.reservation_id !== c.reservation_id);
    }
    const next = {
      ...s,
      reservations,
      outbound: s.outbound.slice(1),
      commands: settle(ctx, s, head, msg.status, msg.detail),
    };
    // the outstanding call is settled: the next queued one may go
    ctx.setState(pump(ctx, next));
    publish(ctx, { type: 'charge-point' });
  }

  return defineActor(chargePointProtocol, {
    placement: 'pinned',
    state: ChargePointState,
    idleMs: null,
    initialState: (): ChargePointState => ({
      protocol: null,
      boot: null,
      connectors: [],
      reservations: [],
      transactions: [],
      finished: [],
      next_transaction_id: 1,
      next_remote_start_id: 1,
      outbound: [],
      commands: [],
    }),
    handle(ctx, msg) {
      switch (msg.type) {
        case 'connected': {
          const booted = ctx.state.boot !== null;
          const s = ctx.state;
          // calls sent on an earlier connection will never be answered: report them and move on
          const stale = s.outbound.filter((o) => o.sent_at !== null && o.connection !== msg.connection);
          let commands = s.commands;
          for (const o of stale)
            commands = settle(ctx, { ...s, commands }, o, 'failed', 'connection closed before the answer');
          // a plain (re)connect writes nothing: the protocol is recorded with the next change
          const base =
            stale.length > 0
              ? { ...s, protocol: msg.protocol, commands, outbound: s.outbound.filter((o) => !stale.includes(o)) }
              : s;
          const next = pump(ctx, base);
          if (next !== s) ctx.setState(next);
          return { booted } satisfies ConnectedReply;
        }
        case 'event':
          return onEvent(ctx, msg.event, msg.protocol);
        case 'command': {
          const commandId = randomUUID();
          const s = ctx.state;
          const queued: ChargePointState = {
            ...s,
            outbound: [
              ...s.outbound,
              {
                command_id: commandId,
                command: msg.command,
                queued_at: Date.now(),
                sent_at: null,
                connection: null,
                ...(msg.notify ? { notify: msg.notify } : {}),
              },
            ],
            commands: record(s, commandId, msg.command.kind, 'queued', null),
          };
          const next = pump(ctx, queued);
          ctx.setState(next);
          const status = next.commands.find((c) => c.command_id === commandId)?.status ?? 'queued';
          return { command_id: commandId, status } satisfies CommandAccepted;
        }
        case 'answer':
          onAnswer(ctx, msg);
          return null;
        case 'get':
          return ctx.state;
      }
    },
    onDeactivate(address: Address, reason: DeactivationReason) {
      if (reason === 'pin-released' || reason === 'idle') return;
      deps.closeSocket(parseAddress(address).key, reason);
    },
  });
}

export type ChargePointActorDefinition = ReturnType<typeof chargePointActor>;
