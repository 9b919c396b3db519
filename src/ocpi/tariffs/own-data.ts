import Type from '#typebox';
import { HttpError, RequestValidationError } from '../../gateway/errors.js';
import { detailsOf } from '../../gateway/validation.js';
import { compileLazily } from '../../lazy-compile.js';
import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { assertOurParty, assertPathId } from '../core/guards.js';
import { ownListRoute, type OperatorRoute } from '../core/mount-kit.js';
import { ObjectId } from '../core/schemas.js';
import { enqueue } from '../outbox/outbox-store.js';
import { TariffVersions } from './versions.js';
import { canonicalJson } from '../core/canonical-json.js';
import { AHEAD_TOLERANCE_MS } from '../core/datetime.js';
import type { ObjectSql } from '../store/object-store.js';
import type { PartyIdentity } from '../core/auth.js';
import type { StoredLocation } from '../locations/schemas-2.2.1.js';
import { tariffFrom211, tariffTo211 } from './mappers.js';
import * as T211 from './schemas-2.1.1.js';
import * as T221 from './schemas-2.2.1.js';
import { withEnergyMixAs } from '../core/energy-mix.js';

const TariffIdPath = Type.Object({ tariff_id: ObjectId });

const tariff221 = compileLazily(T221.Tariff);

/**
 * A body naming our country_code is a 2.2.1 Tariff, and must pass that schema: failing it, it
 * matched the union as a 2.1.1 one (which has neither the party nor min/max_price), and a
 * 2.2.1 tariff with a negative max_price was stored, and every CDR priced with it failed its own
 * schema at each send.
 */
function assert221(body: unknown): void {
  if (tariff221.Check(body)) return;
  // bounded and merged as every other 422: one entry naming an enumeration's values, no union noise
  throw new RequestValidationError(detailsOf('body', [...tariff221.Errors(body)], body));
}

const keysOf = (schema: { properties: object }) => new Set(Object.keys(schema.properties));
const FIELDS_211 = {
  tariff: keysOf(T211.Tariff),
  component: keysOf(T211.PriceComponent),
  restrictions: keysOf(T211.TariffRestrictions),
};
const outside = (o: object, known: Set<string>) => Object.keys(o).some((k) => !known.has(k));

/**
 * Whether a tariff that matched as 2.1.1 (no country_code) holds what only 2.2.1 has: a `vat`,
 * `min_price`, `type`, a `reservation` restriction, ... Taken as 2.1.1, those were dropped without
 * a word (a tariff put without its country_code lost every VAT rate); it is held to the 2.2.1
 * schema instead, whose 422 names what is missing.
 */
function has221Fields(body: T211.Tariff): boolean {
  if (outside(body, FIELDS_211.tariff)) return true;
  return body.elements.some(
    (e) =>
      (e.restrictions !== undefined && outside(e.restrictions, FIELDS_211.restrictions)) ||
      e.price_components.some((c) => outside(c, FIELDS_211.component)),
  );
}

/**
 * Our tariff's `end_date_time` must be after its `start_date_time`, and an element's `end_date`
 * after its `start_date`: one ending before it starts is valid at no instant, and every roamed
 * session on a connector naming only it would end without a CDR (an element: it prices nothing).
 * mod_tariffs states no such rule, so a partner's tariff is taken as sent.
 */
function assertDatesInOrder(tariff: T221.Tariff): void {
  const { start_date_time: start, end_date_time: end } = tariff;
  if (start !== undefined && end !== undefined && !(Date.parse(end) > Date.parse(start)))
    throw dateOrder(['body', 'end_date_time'], `end_date_time ${end} is not after start_date_time ${start}`, end);
  // an element's end_date is exclusive (mod_tariffs TariffRestrictions): one not after its
  // start_date holds on no day, and the element prices nothing
  tariff.elements.forEach((element, i) => {
    const r = element.restrictions;
    if (r?.start_date !== undefined && r.end_date !== undefined && !(r.end_date > r.start_date))
      throw dateOrder(
        ['body', 'elements', i, 'restrictions', 'end_date'],
        `end_date ${r.end_date} is not after start_date ${r.start_date}`,
        r.end_date,
      );
  });
}

/**
 * Our tariff's `min_price` and `max_price`: an `incl_vat` below its `excl_vat` is a negative VAT,
 * and a `min_price` above the `max_price` leaves every total at the maximum, the minimum said
 * nowhere. Both are typing slips an invoice would carry: refused. mod_tariffs states neither
 * rule, so a partner's tariff is taken as sent.
 */
function assertPriceBounds(tariff: T221.Tariff): void {
  for (const field of ['min_price', 'max_price'] as const) {
    const p = tariff[field];
    if (p?.incl_vat !== undefined && p.incl_vat < p.excl_vat)
      throw fieldError(
        ['body', field, 'incl_vat'],
        `${field}.incl_vat ${p.incl_vat} is below its excl_vat ${p.excl_vat}: a negative VAT`,
        'value_error.price_vat',
        p.incl_vat,
      );
  }
  const { min_price: min, max_price: max } = tariff;
  if (!min || !max) return;
  for (const amount of ['excl_vat', 'incl_vat'] as const) {
    const low = min[amount];
    const high = max[amount];
    if (low !== undefined && high !== undefined && low > high)
      throw fieldError(
        ['body', 'min_price', amount],
        `min_price.${amount} ${low} is above max_price.${amount} ${high}`,
        'value_error.price_order',
        low,
      );
  }
}

/**
 * A version of our tariff prices the sessions that start from its `last_updated` on (docs/ROAMING.md
 * "Tariff and place at the start"). One stamped in the future (beyond our clock's tolerance) would
 * leave every session until then on the version before it, silently: refused.
 */
function assertNotAhead(tariff: T221.Tariff): void {
  if (Date.parse(tariff.last_updated) <= Date.now() + AHEAD_TOLERANCE_MS) return;
  throw lastUpdated(
    `last_updated ${tariff.last_updated} is in the future: sessions starting before then would be priced with the version before it`,
    tariff.last_updated,
  );
}

/**
 * A change of our tariff must be stamped after the version it replaces: eMSPs keep the newer
 * `last_updated` and drop an older PUT (their Receivers answer it and keep what they had), a pull
 * by `date_from` misses it, and a session that started between the two stamps would be priced
 * with a version that was not in force then. The same tariff again (a retried PUT) is taken.
 */
function assertNewer(tariff: T221.Tariff, stored: T221.Tariff | undefined, as: 'stored' | 'deleted'): void {
  const at = Date.parse(tariff.last_updated);
  if (!stored || at > Date.parse(stored.last_updated)) return;
  // the same tariff at the same instant, however the stamp is written (Z or +00:00, milliseconds)
  const content = (t: T221.Tariff) => canonicalJson({ ...t, last_updated: undefined });
  if (at === Date.parse(stored.last_updated) && content(tariff) === content(stored)) return;
  throw lastUpdated(
    as === 'stored'
      ? `last_updated ${tariff.last_updated} is not after ${stored.last_updated}, the stored version's: a change needs a later one (eMSPs would keep the stored version)`
      : `last_updated ${tariff.last_updated} is not after ${stored.last_updated}, that of the version deleted last: a tariff put again needs a later one (sessions that started before would be priced with it)`,
    tariff.last_updated,
  );
}

function lastUpdated(msg: string, input: string): RequestValidationError {
  return fieldError(['body', 'last_updated'], msg, 'value_error.last_updated', input);
}

function dateOrder(loc: Array<string | number>, what: string, input: string): RequestValidationError {
  return fieldError(loc, `${what}: it would be valid at no instant`, 'value_error.date_order', input);
}

/** A 422 naming one field of the body. */
function fieldError(
  loc: Array<string | number>,
  msg: string,
  type: string,
  input: string | number,
): RequestValidationError {
  return new RequestValidationError([{ loc, msg, type, input, ctx: {} }]);
}

/**
 * The operator's routes for our own tariffs, on the management mount (docs/OCPI.md "Our own
 * data"): a PUT takes a 2.2.1 Tariff (with our country_code and party_id) or a 2.1.1 one, stored
 * in the 2.2.1 shape and answered in the shape it came in; the GETs answer the stored 2.2.1 shape.
 */
export function ownTariffRoutes(ctx: OcpiContext): OperatorRoute[] {
  return [
    ownListRoute(ctx, {
      path: '/ocpi/tariffs',
      summary: 'Our tariffs (2.2.1), in the order they were first stored',
      item: T221.Tariff,
      store: ctx.stores.tariffs,
    }),
    route({
      method: 'GET',
      path: '/ocpi/tariffs/:tariff_id',
      summary: 'One of our tariffs (2.2.1)',
      params: TariffIdPath,
      response: T221.Tariff,
      responses: { 404: 'no tariff of ours with that id' },
      handler: async (req) => {
        const tariff = await ctx.stores.tariffs.get({ ...ctx.ownParty(), id: req.params.tariff_id });
        if (!tariff) throw new HttpError(404, 'tariff_not_found', `no tariff ${req.params.tariff_id} of ours`);
        return { data: tariff };
      },
    }),
    route({
      method: 'PUT',
      path: '/ocpi/tariffs/:tariff_id',
      summary: 'Creates or replaces one of our tariffs (2.2.1 Tariff, or a 2.1.1 one)',
      params: TariffIdPath,
      body: Type.Union([T221.Tariff, T211.Tariff]),
      response: Type.Union([T221.Tariff, T211.Tariff]),
      handler: async (req) => {
        const body = req.body;
        const id = req.params.tariff_id;
        assertPathId('tariff_id', id, 'id', body.id);
        const own = ctx.ownParty();
        if ('country_code' in body) assertOurParty(own, body, 'a tariff of ours names our country_code and party_id');
        else if (has221Fields(body)) assert221(body);
        // stored in the 2.2.1 shape: an energy mix's impacts named `category` (2.1.1: `source`)
        const tariff = 'country_code' in body ? withEnergyMixAs('2.2.1', body) : tariffFrom211(body, own);
        // what is stored is a 2.2.1 Tariff: a 2.1.1 one converted must be one too (before, a 2.1.1
        // tariff without elements was stored and pushed to every eMSP as a 2.2.1 one without any)
        assert221(tariff);
        assertDatesInOrder(tariff);
        assertPriceBounds(tariff);
        assertNotAhead(tariff);
        // the tariff and its PUT to every registered eMSP commit together (docs/ROAMING.md "What is pushed")
        const stored = await ctx.services.db.group.run(async (tx) => {
          const tariffs = ctx.stores.tariffs.on(tx);
          // a tariff deleted since is held against its last version (kept for late session starts)
          const versions = new TariffVersions(tx);
          const held = await tariffs.get({ ...own, id });
          assertNewer(tariff, held ?? (await versions.newest(own, id)), held ? 'stored' : 'deleted');
          const written = await tariffs.put({ ...own, id }, tariff);
          // a session whose start reaches us after this update is priced with the version of its start
          await versions.keep(own, written);
          await enqueue(tx, { role: 'EMSP' }, { kind: 'tariff', tariff_id: id });
          return written;
        });
        ctx.outbox.kick();
        return { data: 'country_code' in body ? stored : tariffTo211(stored) };
      },
    }),
    deleteOwnTariff(ctx),
  ];
}

/**
 * DELETE of one of our tariffs (docs/OCPI.md "Our own data"): refused while a connector names
 * it; its DELETE goes to every eMSP through the outbox.
 */
function deleteOwnTariff(ctx: OcpiContext): OperatorRoute {
  return route({
    method: 'DELETE',
    path: '/ocpi/tariffs/:tariff_id',
    summary: 'Deletes one of our tariffs and sends its DELETE to every eMSP; answers the tariff it was (2.2.1)',
    params: TariffIdPath,
    response: T221.Tariff,
    responses: {
      404: 'no tariff of ours with that id',
      409: 'a connector of our locations still names it in its tariff_ids (mod_tariffs: take it out first)',
    },
    handler: async (req) => {
      const own = ctx.ownParty();
      const id = req.params.tariff_id;
      // the check, the removal and the DELETE to every eMSP commit together, as the PUT
      const removed = await ctx.services.db.group.run(async (tx) => {
        const tariffs = ctx.stores.tariffs.on(tx);
        const tariff = await tariffs.get({ ...own, id });
        if (!tariff) return undefined;
        const naming = await connectorsNaming(tx, own, id);
        if (naming.length > 0) throw inUse(id, naming);
        await tariffs.remove({ ...own, id });
        // rendered when sent: a tariff that is gone then goes as a DELETE (outbox/courier.ts)
        await enqueue(tx, { role: 'EMSP' }, { kind: 'tariff', tariff_id: id });
        return tariff;
      });
      if (!removed) throw new HttpError(404, 'tariff_not_found', `no tariff ${id} of ours`);
      ctx.outbox.kick();
      req.log.info({ tariff: id }, 'tariff deleted');
      return { data: removed };
    },
  });
}

interface NamingConnector {
  location_id: string;
  evse_uid: string;
  connector_id: string;
}

/**
 * The connectors of our locations whose `tariff_ids` name tariff `id`. mod_tariffs (DELETE)
 * recommends that no Connector references a tariff before it is deleted: an eMSP would show a
 * connector priced by a tariff it was told is gone, and a session there would be priced by
 * whatever else the connector names.
 */
async function connectorsNaming(sql: ObjectSql, own: PartyIdentity, id: string): Promise<NamingConnector[]> {
  // the text filter only narrows the rows read (LIKE ignores case on SQLite); the JSON decides
  const rows = await sql.query(
    `SELECT data FROM ocpi_object WHERE module = 'locations' AND country_code = ? AND party_id = ? AND data LIKE ? ESCAPE '\\'`,
    [own.country_code, own.party_id, `%${JSON.stringify(id).replace(/[\\%_]/g, (c) => `\\${c}`)}%`],
  );
  const found: NamingConnector[] = [];
  for (const row of rows) {
    // written by the locations store from a location that passed its schema
    const location = JSON.parse(String(row.data)) as StoredLocation;
    for (const evse of location.evses ?? [])
      for (const connector of evse.connectors)
        if (connector.tariff_ids?.includes(id))
          found.push({ location_id: location.id, evse_uid: evse.uid, connector_id: connector.id });
  }
  return found;
}

function inUse(id: string, naming: NamingConnector[]): HttpError {
  const where = naming
    .slice(0, 5)
    .map((c) => `connector ${c.connector_id} of EVSE ${c.evse_uid} at location ${c.location_id}`)
    .join(', ');
  const more = naming.length > 5 ? ` and ${naming.length - 5} more` : '';
  return new HttpError(
    409,
    'tariff_in_use',
    `tariff ${id} is named by ${where}${more}: take it out of their tariff_ids first`,
    { connectors: naming.slice(0, 100) },
  );
}
