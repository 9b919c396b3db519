import type { SqlRunner } from '../db/sql.js';

/**
 * What actors last committed, by address, read from the runtime's state table (`actor_state`):
 * for views that must show an actor's state while it is not active (a charger offline, a
 * partner's outbox idle). `unknown` until the reader checks it against the actor's schema.
 */
export async function storedStates(sql: Pick<SqlRunner, 'query'>, addresses: string[]): Promise<Map<string, unknown>> {
  const states = new Map<string, unknown>();
  if (addresses.length === 0) return states;
  const marks = addresses.map(() => '?').join(', ');
  const rows = await sql.query(`SELECT address, state FROM actor_state WHERE address IN (${marks})`, addresses);
  // the runtime's own serialisation of a state
  for (const r of rows) states.set(String(r.address), JSON.parse(String(r.state)) as unknown);
  return states;
}
