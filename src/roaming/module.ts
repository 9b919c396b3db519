import Type, { type Static } from '#typebox';
import { operatorAuthenticator, type OperatorAuth } from '../gateway/csms-auth.js';
import { HttpError } from '../gateway/errors.js';
import { pageHeaders, Paging } from '../gateway/operator-paging.js';
import { defineMount, route, type MountSpec, type RouteSpec } from '../gateway/route-table.js';
import { ChargePointStore } from '../csms/charge-point-store.js';
import { ChargePointId } from '../csms/views.js';
import { ObjectId39 } from '../ocpi/core/schemas.js';
import type * as L221 from '../ocpi/locations/schemas-2.2.1.js';
import { ObjectStore } from '../ocpi/store/object-store.js';
import * as C221 from '../ocpi/cdrs/schemas-2.2.1.js';
import { isCdr221, type StoredCdr } from '../ocpi/sessions/stored.js';
import type { PlatformModule, PlatformServices } from '../platform/services.js';
import type { OutboxHandle } from '../ocpi/module.js';
import type { PartyIdentity } from '../ocpi/core/auth.js';
import { creditCdr, creditRecipients, emspOf } from './credit.js';
import { EvseLinkStore, EvseLinkTakenError, linksChanged } from './evse-links.js';
import { OfflineWatch } from './offline.js';
import { SampleSweep } from './sample-sweep.js';

/**
 * The roaming bridge (docs/ROAMING.md): where our chargers (the CSMS) and our OCPI locations
 * meet. It owns the EVSE links: which EVSE of which of our locations each OCPP EVSE is.
 */

const LinkPath = Type.Object({
  id: ChargePointId,
  evse_number: Type.Integer({ minimum: 1, maximum: 9999, description: '2.0.1 evseId, or 1.6 connectorId' }),
});
const LinkBody = Type.Object({ location_id: ObjectId39, evse_uid: ObjectId39 }, { additionalProperties: false });
const LinkView = Type.Object({
  charge_point_id: Type.String(),
  evse_number: Type.Integer(),
  location_id: Type.String(),
  evse_uid: Type.String(),
});

function linkRoutes(services: PlatformServices): Array<RouteSpec<OperatorAuth>> {
  const links = new EvseLinkStore(services.db);
  const chargePoints = new ChargePointStore(services.db);
  const { db, config } = services;
  // our own locations, read where the OCPI module keeps them
  const locations = new ObjectStore<L221.StoredLocation>(db.sql, 'locations');
  const own = { country_code: config.OCPI_COUNTRY_CODE, party_id: config.OCPI_PARTY_ID };
  return [
    route({
      method: 'PUT',
      path: '/charge-points/:id/evses/:evse_number',
      summary: 'Links an EVSE of a charge point to an EVSE of one of our OCPI locations',
      params: LinkPath,
      body: LinkBody,
      response: LinkView,
      responses: {
        404: 'unknown charge point, location or EVSE uid',
        409: 'that EVSE of the location is linked to another charger EVSE',
      },
      handler: async (req) => {
        const { id, evse_number } = req.params;
        if (!(await chargePoints.find(id))) throw new HttpError(404, 'not_found', `no charge point ${id}`);
        const location = await locations.get({ ...own, id: req.body.location_id });
        if (!location) throw new HttpError(404, 'location_not_found', `no location ${req.body.location_id} of ours`);
        if (!location.evses?.some((e) => e.uid === req.body.evse_uid))
          throw new HttpError(404, 'evse_not_found', `location ${location.id} has no EVSE ${req.body.evse_uid}`);
        try {
          const link = await links.put({ charge_point_id: id, evse_number, ...req.body });
          await linksChanged(services.actors, id);
          req.log.info({ link }, 'EVSE linked');
          return { data: link };
        } catch (err) {
          if (err instanceof EvseLinkTakenError) throw new HttpError(409, 'evse_linked_elsewhere', err.message);
          throw err;
        }
      },
    }),
    route({
      method: 'DELETE',
      path: '/charge-points/:id/evses/:evse_number',
      summary: 'Unlinks an EVSE of a charge point from our OCPI location; answers the link it was',
      params: LinkPath,
      response: LinkView,
      responses: { 404: 'no such link' },
      handler: async (req) => {
        const { id, evse_number } = req.params;
        const removed = await links.delete(id, evse_number);
        if (!removed) throw new HttpError(404, 'link_not_found', `EVSE ${evse_number} of ${id} is not linked`);
        await linksChanged(services.actors, id);
        req.log.info({ link: removed }, 'EVSE unlinked');
        return { data: removed };
      },
    }),
  ];
}

const Delivery = Type.Object({
  partner_key: Type.String(),
  location: Type.Union([Type.String(), Type.Null()]),
  delivered_at: Type.String(),
});
const Deliveries = Type.Array(Delivery, {
  description: "the eMSP's answers to our POST: where it keeps the CDR (its Location header)",
});
const Recipients = Type.Array(
  Type.Object({ partner_key: Type.String(), version: Type.String(), sent: Type.Boolean() }),
  {
    description:
      "the registered links that speak for the CDR's eMSP: a 2.2.1 link is sent the credit, a 2.1.1 one is not (2.1.1 has no credit CDR); none: it goes to a link that registers later",
  },
);
const CdrView = Type.Object({
  cdr: C221.Cdr,
  deliveries: Deliveries,
  credited_by: Type.Union([Type.String(), Type.Null()], {
    description: 'the id of the credit CDR that took this CDR back (POST /v1/cdrs/{id}/credit), if any',
  }),
  // a credit not delivered waits for a 2.2.1 link, or never goes (2.1.1 links only): the list says which
  recipients: Type.Optional(Recipients),
});
type CdrViewOut = Static<typeof CdrView>;
const CreditView = Type.Object({ ...CdrView.properties, recipients: Recipients });
const CreditBody = Type.Object(
  {
    // why the CDR is credited: the credit CDR's remark (2.2.1 CDR remark, string(255))
    remark: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' })),
  },
  { additionalProperties: false },
);

/** The deliveries of the CDRs `ids`, by CDR id, oldest first. */
async function deliveriesOf(
  services: PlatformServices,
  ids: readonly string[],
): Promise<Map<string, Array<Static<typeof Delivery>>>> {
  const byCdr = new Map<string, Array<Static<typeof Delivery>>>();
  if (ids.length === 0) return byCdr;
  const rows = await services.db.sql.query(
    `SELECT cdr_id, partner_key, location, delivered_at FROM roaming_cdr_delivery WHERE cdr_id IN (${ids.map(() => '?').join(', ')}) ORDER BY delivered_at`,
    [...ids],
  );
  for (const r of rows) {
    const id = String(r.cdr_id);
    const list = byCdr.get(id) ?? [];
    list.push({
      partner_key: String(r.partner_key),
      location: r.location === null || r.location === undefined ? null : String(r.location),
      delivered_at: new Date(Number(r.delivered_at)).toISOString(),
    });
    byCdr.set(id, list);
  }
  return byCdr;
}

/** Our CDRs as the operator sees them: each with its deliveries and the credit that took it back. */
async function viewsOf(services: PlatformServices, own: PartyIdentity, cdrs: C221.Cdr[]): Promise<CdrViewOut[]> {
  const ids = cdrs.map((c) => c.id);
  const deliveries = await deliveriesOf(services, ids);
  const creditIds = cdrs.filter((c) => c.credit !== true).map((c) => `${c.id}${C221.CREDIT_SUFFIX}`);
  const credited = new Set<string>();
  if (creditIds.length > 0) {
    const rows = await services.db.sql.query(
      `SELECT object_id FROM ocpi_object WHERE module = 'cdrs' AND country_code = ? AND party_id = ? AND object_id IN (${creditIds.map(() => '?').join(', ')})`,
      [own.country_code, own.party_id, ...creditIds],
    );
    for (const r of rows) credited.add(String(r.object_id));
  }
  const recipients = await recipientsOfCredits(services, cdrs);
  return cdrs.map((cdr) => {
    const credit = `${cdr.id}${C221.CREDIT_SUFFIX}`;
    const to = recipients.get(partyKey(emspOf(cdr)));
    return {
      cdr,
      deliveries: deliveries.get(cdr.id) ?? [],
      credited_by: credited.has(credit) ? credit : null,
      ...(cdr.credit === true && to ? { recipients: to } : {}),
    };
  });
}

const partyKey = (p: PartyIdentity): string => `${p.country_code}*${p.party_id}`;

/** The links of the eMSPs of the credit CDRs among `cdrs` (one read per eMSP), by party. */
async function recipientsOfCredits(
  services: PlatformServices,
  cdrs: C221.Cdr[],
): Promise<Map<string, Awaited<ReturnType<typeof creditRecipients>>>> {
  const byParty = new Map<string, Awaited<ReturnType<typeof creditRecipients>>>();
  for (const cdr of cdrs) {
    const emsp = emspOf(cdr);
    if (cdr.credit === true && !byParty.has(partyKey(emsp)))
      byParty.set(partyKey(emsp), await creditRecipients(services.db.sql, emsp));
  }
  return byParty;
}

/**
 * GET /v1/cdrs: our chargers' CDRs, newest first; GET /v1/sessions/{id}/cdr: the CDR of one of
 * our roamed sessions. Each as its eMSP gets it (2.2.1), with where the eMSP keeps it.
 */
function cdrRoutes(services: PlatformServices, outbox: OutboxHandle): Array<RouteSpec<OperatorAuth>> {
  const cdrs = new ObjectStore<StoredCdr>(services.db.sql, 'cdrs');
  const { config } = services;
  const own = { country_code: config.OCPI_COUNTRY_CODE, party_id: config.OCPI_PARTY_ID };
  return [
    route({
      method: 'GET',
      path: '/cdrs',
      summary: "Our chargers' CDRs (2.2.1), newest first, each with the eMSP's answers to our POST",
      query: Type.Object(Paging),
      response: Type.Array(CdrView),
      handler: async (req) => {
        const { offset, limit } = req.query;
        const page = await cdrs.list({ offset, limit }, [own], { newestFirst: true });
        return {
          data: await viewsOf(services, own, page.items.filter(isCdr221)),
          headers: pageHeaders(config, req, page.total, offset, limit),
        };
      },
    }),
    route({
      method: 'GET',
      path: '/sessions/:id/cdr',
      summary: 'The CDR of a roamed session (2.2.1), once it ended and was priced; where its eMSP keeps it',
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 36 }) }),
      response: CdrView,
      responses: { 404: 'no CDR for this session (not roamed, still running, or not priced yet)' },
      handler: async (req) => {
        const cdr = await cdrs.get({ ...own, id: req.params.id });
        if (!cdr || !isCdr221(cdr)) throw new HttpError(404, 'cdr_not_found', `no CDR for session ${req.params.id}`);
        const [view] = await viewsOf(services, own, [cdr]);
        return { data: view };
      },
    }),
    creditRoute(services, outbox),
  ];
}

/**
 * POST /v1/cdrs/{id}/credit: a credit CDR of one of ours, to the eMSP of its token (credit.ts;
 * docs/TARIFFS.md "Crediting a CDR").
 */
function creditRoute(services: PlatformServices, outbox: OutboxHandle): RouteSpec<OperatorAuth> {
  const { config } = services;
  const own = { country_code: config.OCPI_COUNTRY_CODE, party_id: config.OCPI_PARTY_ID };
  return route({
    method: 'POST',
    path: '/cdrs/:id/credit',
    summary:
      "Credits one of our CDRs: a credit CDR (2.2.1) of id `{id}-C`, its amounts negated, sent to the eMSP of the CDR's token",
    params: Type.Object({ id: C221.CdrId }),
    body: CreditBody,
    bodyOptional: true,
    response: CreditView,
    status: 201,
    responses: {
      201: 'the credit CDR, stored and queued for the eMSP (2.2.1 links only: 2.1.1 has no credit CDR)',
      404: 'no CDR of ours with that id',
      409: 'the CDR is a credit CDR, was credited before, or is still on its way to its eMSP',
    },
    handler: async (req) => {
      const { credit, recipients } = await creditCdr(services.db, own, req.params.id, req.body?.remark);
      outbox.kick();
      req.log.info({ cdr_id: req.params.id, credit_id: credit.id, total_cost: credit.total_cost }, 'CDR credited');
      return { status: 201, data: { cdr: credit, deliveries: [], credited_by: null, recipients } };
    },
  });
}

export function roamingModule(outbox: OutboxHandle): PlatformModule {
  let watch: OfflineWatch | undefined;
  let samples: SampleSweep | undefined;
  return {
    name: 'roaming',
    mounts(services): Array<MountSpec<unknown>> {
      const { config } = services;
      watch = new OfflineWatch({
        db: services.db,
        actors: services.actors,
        links: new EvseLinkStore(services.db),
        log: services.log.child({ module: 'roaming' }),
        own: { country_code: config.OCPI_COUNTRY_CODE, party_id: config.OCPI_PARTY_ID },
        graceMs: config.ROAMING_OFFLINE_GRACE_MS,
        queued: () => outbox.kick(),
      });
      samples = new SampleSweep({
        db: services.db,
        own: { country_code: config.OCPI_COUNTRY_CODE, party_id: config.OCPI_PARTY_ID },
        retentionDays: config.ROAMING_SAMPLE_RETENTION_DAYS,
        log: services.log.child({ module: 'roaming' }),
      });
      return [
        defineMount<OperatorAuth>({
          name: 'roaming-management',
          prefix: '/v1',
          description: 'The roaming bridge: our chargers as EVSEs of our OCPI locations (operators)',
          security: 'bearer',
          authenticate: operatorAuthenticator(services.config),
          routes: [...linkRoutes(services), ...cdrRoutes(services, outbox)],
        }),
      ];
    },
    attach() {
      watch?.start();
      samples?.start();
    },
    stop() {
      watch?.stop();
      return samples?.stop() ?? Promise.resolve();
    },
  };
}
