import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { operatorAuthenticator, type OperatorAuth } from '../gateway/csms-auth.js';
import { HttpError } from '../gateway/errors.js';
import { defineMount, route, type MountSpec, type RouteRequest } from '../gateway/route-table.js';
import type { PartnerMessage } from '../../actors/partner/protocol.js';
import * as S211 from './2.1.1/schemas.js';
import * as S221 from './2.2.1/schemas.js';
import { hashToken, newToken } from './auth.js';
import { endpointOf, PartnerCallError, SUPPORTED_VERSIONS, type Discovery } from './client/partner-client.js';
import { CountryCode, ObjectId, PartyId } from './common/schemas.js';
import type { OcpiContext } from './context.js';
import { ourRoleToward, ownCredentials } from './credentials.js';
import type { OcpiVersion } from './envelope.js';
import { patchLocation, putLocation } from './location-service.js';
import { locationFrom211 } from './mappers.js';
import type { PartnerRow, PartnerView } from './partners.js';

const Role = Type.Union([Type.Literal('CPO'), Type.Literal('EMSP')]);
const NewPartner = Type.Object({ country_code: CountryCode, party_id: PartyId, role: Role });
const PartnerOut = Type.Object({
  id: Type.String(),
  country_code: Type.String(),
  party_id: Type.String(),
  role: Role,
  status: Type.String(),
  versions_url: Type.Union([Type.String(), Type.Null()]),
  version: Type.Union([Type.String(), Type.Null()]),
});
const Created = Type.Object({
  ...PartnerOut.properties,
  token: Type.String({ description: 'Token A' }),
  versions_url: Type.String(),
});
const IdPath = Type.Object({ id: Type.String({ format: 'uuid' }) });
const LocationIdPath = Type.Object({ location_id: ObjectId });
const RegisterBody = Type.Object({
  versions_url: Type.String({ minLength: 1 }),
  token: Type.String({ minLength: 1, maxLength: 64 }),
});
const PullBody = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) });

const checkLocation211 = Compile(S211.Location);
const checkLocation221 = Compile(S221.Location);
const checkCredentials221 = Compile(S221.Credentials);
const checkCredentials211 = Compile(S211.Credentials);

type Req = RouteRequest<OperatorAuth>;

/**
 * The operator's OCPI routes on the management surface ({csms_base_url} = /v1, Bearer
 * CSMS_API_KEY): partner onboarding (Token A), the client side of a handshake with a partner
 * that onboarded us, rotation, pulling a partner's locations, and our own locations, tariffs
 * and tokens (docs/OCPI.md "Our own data").
 */
export function ocpiManagementMount(ctx: OcpiContext): MountSpec<OperatorAuth> {
  const config = ctx.services.config;

  async function partnerOf(req: Req): Promise<PartnerRow> {
    const partner = await ctx.partners.byId(String(req.params.id));
    if (!partner) throw new HttpError(404, 'partner_not_found', `no partner ${String(req.params.id)}`);
    return partner;
  }

  function ourVersionsUrl(base: string, partnerRole: 'CPO' | 'EMSP'): string {
    return `${base}/ocpi/${ourRoleToward(partnerRole) === 'CPO' ? 'cpo' : 'emsp'}/versions`;
  }

  /** A failed call to a partner: 502 with the failure's category; what exactly failed goes to our log only. */
  function badGateway(err: unknown): never {
    if (err instanceof PartnerCallError) {
      ctx.services.log.warn({ partnerCall: err.toLog() }, 'partner call failed');
      throw new HttpError(502, 'partner_call_failed', err.message, { ocpi_status_code: err.code });
    }
    throw err;
  }

  /** Their credentials object, in either version's shape. */
  function theirCredentials(data: unknown): {
    token: string;
    url: string;
    business: { name: string; website?: string } | null;
  } {
    if (checkCredentials221.Check(data))
      return { token: data.token, url: data.url, business: data.roles[0]?.business_details ?? null };
    if (checkCredentials211.Check(data)) return { token: data.token, url: data.url, business: data.business_details };
    throw new PartnerCallError(3001, 'unexpected data', {
      message: 'the partner answered without a credentials object',
    });
  }

  /**
   * An outbound credentials exchange: a pending token of ours goes first (the partner may use
   * it while it answers), then `exchange`; on failure the pending token is withdrawn, and a
   * failed call to the partner answers 502.
   */
  async function withPendingToken<R>(
    partner: PartnerRow,
    exchange: (ours: string, pendingHash: string) => Promise<R>,
  ): Promise<R> {
    const ours = newToken();
    const pending = hashToken(ours);
    await ctx.partners.ask(partner.country_code, partner.party_id, { op: 'prepare-outbound', pending_hash: pending });
    try {
      return await exchange(ours, pending);
    } catch (err) {
      await ctx.partners.ask(partner.country_code, partner.party_id, { op: 'abort-outbound', pending_hash: pending });
      return badGateway(err);
    }
  }

  /** The end of an outbound exchange: the partner actor records the link, our pending token becomes current. */
  async function completeOutbound(
    partner: PartnerRow,
    link: Omit<Extract<PartnerMessage, { op: 'complete-outbound' }>, 'op'>,
  ): Promise<PartnerView> {
    const reply = await ctx.partners.ask(partner.country_code, partner.party_id, { op: 'complete-outbound', ...link });
    if (!reply.ok) throw new HttpError(409, 'handshake_superseded', reply.message);
    return reply.partner;
  }

  /**
   * Our side of a handshake with a partner that gave us `token` (their Token A) and its
   * versions URL: discovery (the partner discovers us with our pending token while answering),
   * POST /credentials, and the partner actor records the link.
   */
  async function registerWith(req: Req, partner: PartnerRow, body: { versions_url: string; token: string }) {
    return withPendingToken(partner, async (ours, pending) => {
      let discovery: Discovery;
      try {
        discovery = await ctx.client.discover(body.versions_url, body.token, '2.2.1');
      } catch (err) {
        // a 2.1.1-only partner expects the raw token on its versions URL: try again only when the
        // partner answered and refused (a timeout or a refused destination would fail twice)
        if (
          !(err instanceof PartnerCallError) ||
          !(err.reason === 'error answer' || err.reason === 'not an OCPI envelope')
        )
          throw err;
        discovery = await ctx.client.discover(body.versions_url, body.token, '2.1.1');
      }
      const endpoint = endpointOf(discovery.endpoints, 'credentials');
      if (!endpoint)
        throw new PartnerCallError(3001, 'unexpected data', { message: 'the partner lists no credentials endpoint' });
      const version = endpoint.version as OcpiVersion;
      const role = ourRoleToward(partner.role);
      const sent = ownCredentials(ctx, version, ours, ourVersionsUrl(ctx.baseUrl(req.koa), partner.role), role);
      const answer = await ctx.client.data('POST', endpoint.url, body.token, version, sent);
      const theirs = theirCredentials(answer.envelope.data);
      return completeOutbound(partner, {
        pending_hash: pending,
        their_token: theirs.token,
        versions_url: theirs.url,
        version: discovery.version,
        endpoints: discovery.endpoints,
        business_details: theirs.business,
      });
    });
  }

  /** Our side of a rotation: a new token of ours, PUT /credentials, the partner's new token. */
  async function rotateWith(req: Req, partner: PartnerRow) {
    const state = await ctx.partners.ask(partner.country_code, partner.party_id, { op: 'get' });
    if (!state.ok || state.partner.status !== 'registered' || !state.their_token)
      throw new HttpError(409, 'not_registered', 'the partner is not registered');
    const current = state.partner;
    const theirOld = state.their_token;
    return withPendingToken(partner, async (ours, pending) => {
      // PUT /credentials exists on some mounts only (eMSP: 2.1.1): try the versions in order
      let answer;
      let version: OcpiVersion | undefined;
      for (const v of SUPPORTED_VERSIONS) {
        const endpoint = current.endpoints.find((e) => e.version === v && e.identifier === 'credentials');
        if (!endpoint) continue;
        const sent = ownCredentials(
          ctx,
          v,
          ours,
          ourVersionsUrl(ctx.baseUrl(req.koa), partner.role),
          ourRoleToward(partner.role),
        );
        try {
          answer = await ctx.client.data('PUT', endpoint.url, theirOld, v, sent);
          version = v;
          break;
        } catch (err) {
          if (err instanceof PartnerCallError && err.httpStatus === 405) continue;
          throw err;
        }
      }
      if (!answer || !version)
        throw new PartnerCallError(3001, 'error answer', {
          message: 'no credentials endpoint of the partner accepts PUT',
        });
      const theirs = theirCredentials(answer.envelope.data);
      const linked = await completeOutbound(partner, {
        pending_hash: pending,
        their_token: theirs.token,
        versions_url: theirs.url,
        version: current.version ?? version,
        endpoints: current.endpoints,
        business_details: theirs.business ?? current.business_details,
      });
      return { ...linked, rotated_with_version: version };
    });
  }

  /** GETs every page of the partner's locations (following Link rel="next") and stores them. */
  async function pullLocations(partner: PartnerRow, limit: number | undefined) {
    const state = await ctx.partners.ask(partner.country_code, partner.party_id, { op: 'get' });
    if (!state.ok || state.partner.status !== 'registered' || !state.their_token)
      throw new HttpError(409, 'not_registered', 'the partner is not registered');
    const chosen = endpointOf(state.partner.endpoints, 'locations');
    if (!chosen) throw new HttpError(409, 'no_locations_endpoint', 'the partner lists no locations endpoint');
    const version = chosen.version as OcpiVersion;
    const url = limit ? `${chosen.url}?limit=${limit}` : chosen.url;
    const party = { country_code: partner.country_code, party_id: partner.party_id };
    const ids: string[] = [];
    let rejected = 0;
    let pages = 0;
    try {
      // each page is stored before the next one is read (one page in memory at a time); a failure
      // part-way answers 502 and keeps the pages stored so far (a pull again overwrites them)
      for await (const page of ctx.client.pages(url, state.their_token, version)) {
        pages++;
        for (const o of page) {
          let location: S221.StoredLocation | undefined;
          if (version === '2.1.1' && checkLocation211.Check(o)) location = locationFrom211(o, party);
          else if (version === '2.2.1' && checkLocation221.Check(o) && o.id) location = { ...o, ...party, id: o.id };
          if (!location) {
            rejected++;
            continue;
          }
          await ctx.stores.locations.put({ ...party, id: location.id }, location);
          ids.push(location.id);
        }
      }
    } catch (err) {
      return badGateway(err);
    }
    return { version, url: chosen.url, pages, stored: ids.length, rejected, location_ids: ids };
  }

  const ownParty = () => ({ country_code: ctx.own.country_code, party_id: ctx.own.party_id });

  /** 400 unless the party a body names is ours; a field the body leaves out names ours. */
  function assertOurParty(named: { country_code?: string; party_id?: string }, message: string): void {
    if (
      (named.country_code ?? ctx.own.country_code) !== ctx.own.country_code ||
      (named.party_id ?? ctx.own.party_id) !== ctx.own.party_id
    ) {
      throw new HttpError(400, 'not_own_party', message);
    }
  }

  /** 400 unless the body's id is the one the path names. */
  function assertPathId(pathName: string, pathValue: string, bodyName: string, bodyValue: string): void {
    if (bodyValue !== pathValue)
      throw new HttpError(
        400,
        'id_mismatch',
        `path ${pathName} ${pathValue} differs from body ${bodyName} ${bodyValue}`,
      );
  }

  return defineMount<OperatorAuth>({
    name: 'ocpi-management',
    prefix: '/v1',
    description: 'OCPI partners and our own OCPI data (operators)',
    security: 'bearer',
    authenticate: operatorAuthenticator(config),
    routes: [
      route({
        method: 'POST',
        path: '/partners',
        summary: 'Onboards a partner: answers Token A and the versions URL to start the handshake from',
        body: NewPartner,
        response: Created,
        responses: { 409: 'the partner is registered', 422: 'invalid body' },
        handler: async (req) => {
          const body = req.body;
          if (ctx.isOwn(body)) throw new HttpError(409, 'own_party', 'that is our own country_code and party_id');
          const { partner, token } = await ctx.partners.create(body.country_code, body.party_id, body.role);
          req.log.info(
            { partner: `${partner.country_code}-${partner.party_id}`, role: partner.role },
            'partner onboarded',
          );
          const versionsUrl = ourVersionsUrl(ctx.baseUrl(req.koa), partner.role);
          return {
            status: 201,
            data: {
              id: partner.id,
              token,
              versions_url: versionsUrl,
              country_code: partner.country_code,
              party_id: partner.party_id,
              role: partner.role,
              status: partner.status,
              version: partner.version,
            },
          };
        },
      }),
      route({
        method: 'GET',
        path: '/partners',
        summary: 'Every partner',
        response: Type.Array(PartnerOut),
        handler: async () => ({ data: await ctx.partners.list() }),
      }),
      route({
        method: 'GET',
        path: '/partners/:id',
        summary: 'One partner',
        params: IdPath,
        response: PartnerOut,
        responses: { 404: 'unknown partner' },
        handler: async (req) => {
          const row = await partnerOf(req);
          const state = await ctx.partners.ask(row.country_code, row.party_id, { op: 'get' });
          return {
            data: state.ok
              ? { ...row, endpoints: state.partner.endpoints, business_details: state.partner.business_details }
              : row,
          };
        },
      }),
      route({
        method: 'POST',
        path: '/partners/:id/register',
        summary: 'Handshake with a partner that onboarded us: its versions URL and the Token A it gave us',
        params: IdPath,
        body: RegisterBody,
        response: PartnerOut,
        responses: { 404: 'unknown partner', 502: 'the partner could not be used' },
        handler: async (req) => ({ data: await registerWith(req, await partnerOf(req), req.body) }),
      }),
      route({
        method: 'POST',
        path: '/partners/:id/rotate',
        summary: 'Rotates our credentials with a registered partner (PUT /credentials)',
        params: IdPath,
        response: PartnerOut,
        responses: { 404: 'unknown partner', 409: 'not registered', 502: 'the partner could not be used' },
        handler: async (req) => ({ data: await rotateWith(req, await partnerOf(req)) }),
      }),
      route({
        method: 'POST',
        path: '/partners/:id/pull-locations',
        summary: "Pulls every page of a registered CPO partner's locations and stores them",
        params: IdPath,
        body: PullBody,
        bodyOptional: true,
        responses: { 404: 'unknown partner', 409: 'not registered', 502: 'the partner could not be used' },
        handler: async (req) => {
          const body = req.body ?? {};
          return { data: await pullLocations(await partnerOf(req), body.limit) };
        },
      }),
      route({
        method: 'PUT',
        path: '/ocpi/locations/:location_id',
        summary: 'Creates or replaces one of our locations (2.2.1 shape; country_code and party_id are ours)',
        params: LocationIdPath,
        body: S221.Location,
        response: S221.LocationOut,
        handler: async (req) => {
          const body = req.body;
          assertOurParty(body, `country_code and party_id must be ours (${ctx.own.country_code}-${ctx.own.party_id})`);
          return { data: await putLocation(ctx, ownParty(), req.params.location_id, body) };
        },
      }),
      route({
        method: 'PATCH',
        path: '/ocpi/locations/:location_id',
        summary: 'Partial update of one of our locations, its EVSEs (by uid) or connectors (by id)',
        params: LocationIdPath,
        body: S221.LocationPatchBody,
        response: S221.LocationOut,
        responses: { 404: 'unknown location' },
        handler: async (req) => {
          const body = req.body;
          assertOurParty(body, 'country_code and party_id must be ours');
          return { data: await patchLocation(ctx, ownParty(), req.params.location_id, body) };
        },
      }),
      route({
        method: 'PUT',
        path: '/ocpi/tariffs/:tariff_id',
        summary: 'Creates or replaces one of our tariffs (2.1.1 Tariff)',
        params: Type.Object({ tariff_id: ObjectId }),
        body: S211.Tariff,
        response: S211.Tariff,
        handler: async (req) => {
          const body = req.body;
          const id = req.params.tariff_id;
          assertPathId('tariff_id', id, 'id', body.id);
          return { data: await ctx.stores.tariffs.put({ ...ownParty(), id }, body) };
        },
      }),
      route({
        method: 'PUT',
        path: '/ocpi/tokens/:country_code/:party_id/:token_uid',
        summary: "Creates or replaces a token: ours (eMSP tokens), or a partner's known to our CPO",
        params: S211.TokenPath,
        body: S211.Token,
        response: S211.Token,
        handler: async (req) => {
          const body = req.body;
          const uid = req.params.token_uid;
          assertPathId('token_uid', uid, 'uid', body.uid);
          const party = { country_code: req.params.country_code, party_id: req.params.party_id };
          return { data: await ctx.stores.tokens.put({ ...party, id: uid }, body) };
        },
      }),
    ],
  });
}
