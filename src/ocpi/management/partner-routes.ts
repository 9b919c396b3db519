import Type from '#typebox';
import { HttpError } from '../../gateway/errors.js';
import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import type { OperatorRoute } from '../core/mount-kit.js';
import { CountryCode, CredentialsToken, PartyId } from '../core/schemas.js';
import { ourVersionsUrl, registerWith, rotateWith, unregisterWith } from './handshake.js';
import { partnerCommandRoutes } from './commands.js';
import { IdPath, partnerOf } from './partner-of.js';
import { ExchangeModule } from './exchange-module.js';
import { pull } from './pull.js';
import { push } from './push.js';

/**
 * The operator's partner routes on the management mount (/v1): onboarding (Token A), the
 * client side of a handshake with a partner that onboarded us, rotation, and pulling a
 * partner's locations (docs/OCPI.md "The credentials link").
 */

const Role = Type.Union([Type.Literal('CPO'), Type.Literal('EMSP')]);
const Party = Type.Object({ country_code: CountryCode, party_id: PartyId, role: Role });
const NewPartner = Type.Object({
  country_code: CountryCode,
  party_id: PartyId,
  role: Role,
  parties: Type.Optional(
    Type.Array(Party, {
      maxItems: 100,
      description:
        'the other parties and roles the partner may speak for (a 2.2.1 platform); its credentials grant only these',
    }),
  ),
});
const PartnerOut = Type.Object({
  id: Type.String(),
  country_code: Type.String(),
  party_id: Type.String(),
  role: Role,
  status: Type.String(),
  versions_url: Type.Union([Type.String(), Type.Null()]),
  version: Type.Union([Type.String(), Type.Null()]),
  parties: Type.Array(Type.Object({ country_code: Type.String(), party_id: Type.String(), role: Role }), {
    description:
      'the other parties the link speaks for (a 2.2.1 platform): those of allowed_parties its credentials list',
  }),
  allowed_parties: Type.Optional(
    Type.Array(Type.Object({ country_code: Type.String(), party_id: Type.String(), role: Role }), {
      description: 'the other parties the operator lets the partner speak for (shown by GET of one partner)',
    }),
  ),
});
const Created = Type.Object({
  ...PartnerOut.properties,
  token: Type.String({ description: 'Token A' }),
  versions_url: Type.String(),
});
const RegisterBody = Type.Object({
  // 422 for what is no http(s) URL: the call would fail before reaching anyone (was a 502, "partner unreachable")
  versions_url: Type.String({
    maxLength: 255,
    pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#@]+(?:[/?#]\\S*)?$',
    description: "the partner's versions URL: http or https, at most 255 characters (OCPI URL)",
  }),
  // refused before any call: the partner would be sent a token it cannot take (was a 502)
  token: CredentialsToken,
  version: Type.Optional(
    Type.Union([Type.Literal('2.1.1'), Type.Literal('2.2.1')], {
      description:
        'the OCPI version of the link; by default the highest both sides list. 3002 (a 502) when the partner does not list it',
    }),
  ),
});
/** `force`: end the link here even when the partner cannot be told (it is gone for good) */
const UnregisterQuery = Type.Object({ force: Type.Optional(Type.Boolean()) });
/** `/partners/{id}/pull|push/{module}`: the partner and one of the modules we exchange. */

const ModulePath = Type.Object({ id: IdPath.properties.id, module: ExchangeModule });
const PullBody = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) });

/** Every partner route, in the order of the route table. */
export function partnerRoutes(ctx: OcpiContext): OperatorRoute[] {
  return [
    onboardRoute(ctx),
    ...partnerReadRoutes(ctx),
    ...partnerLinkRoutes(ctx),
    ...partnerExchangeRoutes(ctx),
    ...partnerCommandRoutes(ctx),
  ];
}

/** POST /partners: a new partner (or a fresh Token A for an unregistered one). */
function onboardRoute(ctx: OcpiContext): OperatorRoute {
  return route({
    method: 'POST',
    path: '/partners',
    summary: 'Onboards a partner: answers Token A and the versions URL to start the handshake from',
    body: NewPartner,
    response: Created,
    status: 201,
    responses: { 409: 'the partner is registered', 422: 'invalid body' },
    handler: async (req) => {
      const body = req.body;
      if (ctx.isOwn(body) || body.parties?.some((p) => ctx.isOwn(p)))
        throw new HttpError(409, 'own_party', 'that is our own country_code and party_id');
      const { partner, token } = await ctx.partners.create(body.country_code, body.party_id, body.role, body.parties);
      req.log.info({ partner: `${partner.country_code}-${partner.party_id}`, role: partner.role }, 'partner onboarded');
      // a platform with parties of both roles registers at the overview, whose details list both
      // sides: a role mount's list only the side for the onboarded party's role (docs/OCPI.md)
      const bothRoles = body.parties?.some((p) => p.role !== partner.role) === true;
      const origin = ctx.baseUrl(req.koa);
      const versionsUrl = bothRoles ? `${origin}/ocpi/2.2.1/versions` : ourVersionsUrl(origin, partner.role);
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
          parties: partner.parties,
          allowed_parties: partner.allowed_parties,
        },
      };
    },
  });
}

/** GET /partners and GET /partners/{id}. */
function partnerReadRoutes(ctx: OcpiContext): OperatorRoute[] {
  return [
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
        const row = await partnerOf(ctx, req);
        const state = await ctx.partners.ask(row.country_code, row.party_id, { op: 'get' });
        return {
          data: state.ok
            ? {
                ...row,
                endpoints: state.partner.endpoints,
                business_details: state.partner.business_details,
                allowed_parties: state.partner.allowed_parties,
              }
            : row,
        };
      },
    }),
  ];
}

/** POST /partners/{id}/register, /rotate and /unregister: the credentials calls we make to a partner. */
function partnerLinkRoutes(ctx: OcpiContext): OperatorRoute[] {
  return [
    route({
      method: 'POST',
      path: '/partners/:id/register',
      summary: 'Handshake with a partner that onboarded us: its versions URL and the Token A it gave us',
      params: IdPath,
      body: RegisterBody,
      response: PartnerOut,
      responses: { 404: 'unknown partner', 502: 'the partner could not be used' },
      handler: async (req) => ({
        data: await registerWith(ctx, ctx.baseUrl(req.koa), await partnerOf(ctx, req), req.body),
      }),
    }),
    route({
      method: 'POST',
      path: '/partners/:id/rotate',
      summary: 'Rotates our credentials with a registered partner (PUT /credentials)',
      params: IdPath,
      response: PartnerOut,
      responses: { 404: 'unknown partner', 409: 'not registered', 502: 'the partner could not be used' },
      handler: async (req) => ({ data: await rotateWith(ctx, ctx.baseUrl(req.koa), await partnerOf(ctx, req)) }),
    }),
    route({
      method: 'POST',
      path: '/partners/:id/unregister',
      summary:
        'Ends the link with a registered partner: DELETE of its credentials, then our tokens for it stop working (?force=true: also when the partner cannot be told)',
      params: IdPath,
      query: UnregisterQuery,
      response: PartnerOut,
      responses: {
        404: 'unknown partner',
        409: 'not registered',
        502: 'the partner could not be used (the link stays; with ?force=true it ends here all the same)',
      },
      handler: async (req) => ({
        data: await unregisterWith(ctx, await partnerOf(ctx, req), req.query.force === true),
      }),
    }),
  ];
}

/** POST /partners/{id}/pull and /push: our client on the partner's module interfaces. */
function partnerExchangeRoutes(ctx: OcpiContext): OperatorRoute[] {
  return [
    route({
      method: 'POST',
      path: '/partners/:id/pull-locations',
      summary: "Pulls every page of a registered CPO partner's locations and stores them (as pull/locations)",
      params: IdPath,
      body: PullBody,
      bodyOptional: true,
      responses: {
        404: 'unknown partner',
        409: 'not registered, or not a CPO (an eMSP has no locations to pull)',
        502: 'the partner could not be used',
      },
      handler: async (req) => {
        const body = req.body ?? {};
        const { module: _m, ids, ...rest } = await pull(ctx, await partnerOf(ctx, req), 'locations', body.limit);
        return { data: { ...rest, location_ids: ids } };
      },
    }),
    route({
      method: 'POST',
      path: '/partners/:id/pull/:module',
      summary:
        "Pulls every page of a registered partner's Sender of a module and stores what passes its version's checks",
      params: ModulePath,
      body: PullBody,
      bodyOptional: true,
      responses: {
        404: 'unknown partner',
        409: 'not registered, the module is not served by a partner of its role, or no Sender endpoint',
        502: 'the partner could not be used (the pages stored so far stay)',
      },
      handler: async (req) => ({
        data: await pull(ctx, await partnerOf(ctx, req), req.params.module, (req.body ?? {}).limit),
      }),
    }),
    route({
      method: 'POST',
      path: '/partners/:id/push/:module',
      summary:
        "Sends our objects of a module to a registered partner's Receiver, one call each: locations, tariffs, and the sessions and CDRs of its tokens to an eMSP; our tokens to a CPO",
      params: ModulePath,
      responses: {
        404: 'unknown partner',
        409: 'not registered, the module is not taken by a partner of its role, or no Receiver endpoint',
        502: 'the partner could not be reached',
      },
      handler: async (req) => ({ data: await push(ctx, await partnerOf(ctx, req), req.params.module) }),
    }),
  ];
}
