import type { FirmwareCharger } from './firmware-charger.js';

/** What the check reads of a charger: who it is, whether it drained, what it was told. */
export type ChargerLedger = Pick<FirmwareCharger, 'identity' | 'drained' | 'transactions'>;

/** The fields of a /v1 session the check reads. */
export interface SessionView {
  transaction_id: string;
  status: string;
  meter_start_wh: number | null;
  meter_last_wh: number | null;
  energy_wh: number;
}

export interface LedgerCheck {
  startsAcked: number;
  startsFound: number;
  stopsAcked: number;
  stopsFound: number;
  metersAcked: number;
  metersFound: number;
  /** an acknowledged start, meter value or stop that /v1/sessions does not show */
  lost: string[];
  /** two sessions for one transaction, or a session for a transaction the charger never started */
  duplicates: string[];
}

export function emptyLedgerCheck(): LedgerCheck {
  return {
    startsAcked: 0,
    startsFound: 0,
    stopsAcked: 0,
    stopsFound: 0,
    metersAcked: 0,
    metersFound: 0,
    lost: [],
    duplicates: [],
  };
}

/**
 * Compares what one charger was told (every CALLRESULT) with its sessions in /v1. Meters only
 * grow and the charger sends in order, so the session of a drained charger must show exactly
 * the last acknowledged value: the stop's meter (COMPLETED) or the last meter value (ACTIVE),
 * and energy = that value - meter start. A charger that did not drain may have had one more
 * message applied whose answer it never got, so for it an acknowledged value is "found" when
 * the session is at or past it.
 */
export function checkLedger(charger: ChargerLedger, sessions: SessionView[], into: LedgerCheck): void {
  const id = charger.identity.id;
  const exact = charger.drained;
  const known = new Set<string>();
  for (const tx of charger.transactions) {
    if (!tx.startAcked || tx.transactionId === undefined) continue;
    const name = `${id} transaction ${tx.transactionId}`;
    known.add(tx.transactionId);
    into.startsAcked += 1;
    into.metersAcked += tx.metersAcked.length;
    if (tx.stopAcked) into.stopsAcked += 1;
    const matching = sessions.filter((s) => s.transaction_id === tx.transactionId);
    if (matching.length > 1) into.duplicates.push(`${name}: ${matching.length} sessions`);
    const session = matching[0];
    if (!session) {
      into.lost.push(`${name}: acknowledged start, no session`);
      continue;
    }
    into.startsFound += 1;
    const last = session.meter_last_wh ?? -1;
    into.metersFound += tx.metersAcked.filter((wh) => wh <= last).length;
    const expectedLast = tx.stopAcked ? tx.meterStop : (tx.metersAcked.at(-1) ?? tx.meterStart);
    if (expectedLast === undefined) continue;
    const energyOk = session.energy_wh === last - tx.meterStart;
    const meterOk = exact ? last === expectedLast : last >= expectedLast;
    if (!meterOk || !energyOk)
      into.lost.push(
        `${name}: acknowledged meter ${expectedLast} (start ${tx.meterStart}), session shows meter ${last}, energy ${session.energy_wh}`,
      );
    if (tx.stopAcked) {
      if (session.status === 'COMPLETED') into.stopsFound += 1;
      else into.lost.push(`${name}: acknowledged stop, session ${session.status}`);
    } else if (exact && session.status !== 'ACTIVE')
      into.lost.push(`${name}: never stopped, session ${session.status}`);
  }
  // a charger that did not drain may have a start applied whose answer it never got
  if (exact)
    for (const s of sessions)
      if (!known.has(s.transaction_id))
        into.duplicates.push(`${id}: session for transaction ${s.transaction_id} the charger never started`);
}
