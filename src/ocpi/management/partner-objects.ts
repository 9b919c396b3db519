import Type from '#typebox';
import { HttpError } from '../../gateway/errors.js';
import { pageHeaders, Paging } from '../../gateway/operator-paging.js';
import { route } from '../../gateway/route-table.js';
import type { PartyIdentity } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import type { OperatorRoute } from '../core/mount-kit.js';
import type { PartnerRow } from '../core/partners.js';
import { CountryCode, ObjectId39, PartyId } from '../core/schemas.js';
import { ExchangeModule } from './exchange-module.js';
import { IdPath, partnerOf } from './partner-of.js';
import { senderOf, sendingParties } from './pull.js';

const ModulePath = Type.Object({ id: IdPath.properties.id, module: ExchangeModule });
const ObjectPath = Type.Object({
  id: IdPath.properties.id,
  module: ExchangeModule,
  country_code: CountryCode,
  party_id: PartyId,
  // a CDR id is CiString(39) (a credit CDR's id is its CDR's and a suffix); the other ids are 36
  object_id: ObjectId39,
});

const HeldQuery = Type.Object({
  updated_from: Type.Optional(
    Type.String({ format: 'date-time', description: 'objects whose last_updated is at or after this instant' }),
  ),
  updated_before: Type.Optional(
    Type.String({ format: 'date-time', description: 'objects whose last_updated is before this instant' }),
  ),
  ...Paging,
});

const Held = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'the object as we hold it: locations, tariffs and tokens in the 2.2.1 shape (2.1.1 ones converted), sessions and CDRs in the shape they came in',
  },
);

/** The parties whose objects of `module` we hold from the partner: those of the role whose Sender serves it. */
function heldParties(partner: PartnerRow, module: ExchangeModule): PartyIdentity[] {
  const sender = senderOf(module);
  return sendingParties(partner, module)
    .filter((p) => p.role === sender)
    .map(({ country_code, party_id }) => ({ country_code, party_id }));
}

/**
 * What we hold of a partner (docs/OCPI.md "What we hold of a partner"): the locations, tariffs,
 * sessions and CDRs a CPO pushed us or we pulled from it, the tokens of an eMSP; read-only.
 */
export function partnerObjectRoutes(ctx: OcpiContext): OperatorRoute[] {
  return [
    route({
      method: 'GET',
      path: '/partners/:id/objects/:module',
      summary:
        "A partner's objects we hold (locations, tariffs, sessions, cdrs of a CPO; tokens of an eMSP), latest change first",
      params: ModulePath,
      query: HeldQuery,
      response: Type.Array(Held),
      responses: { 404: 'unknown partner', 409: 'the partner plays the role that does not send the module' },
      handler: async (req) => {
        const partner = await partnerOf(ctx, req);
        const { module } = req.params;
        const { offset, limit, updated_from: from, updated_before: before } = req.query;
        const page = await ctx.stores[module].list(
          {
            offset,
            limit,
            ...(from === undefined ? {} : { from: Date.parse(from) }),
            ...(before === undefined ? {} : { to: Date.parse(before) }),
          },
          heldParties(partner, module),
          { newestFirst: true },
        );
        return { data: page.items, headers: pageHeaders(ctx.services.config, req, page.total, offset, limit) };
      },
    }),
    route({
      method: 'GET',
      path: '/partners/:id/objects/:module/:country_code/:party_id/:object_id',
      summary: "One of a partner's objects we hold, by its party and id (a token by its uid)",
      params: ObjectPath,
      response: Held,
      responses: {
        404: 'unknown partner, or no such object of a party the partner speaks for',
        409: 'the partner plays the role that does not send the module',
      },
      handler: async (req) => {
        const partner = await partnerOf(ctx, req);
        const { module, country_code, party_id, object_id } = req.params;
        const ours = heldParties(partner, module).some(
          (p) => p.country_code === country_code && p.party_id === party_id,
        );
        const held = ours ? await ctx.stores[module].get({ country_code, party_id, id: object_id }) : undefined;
        if (!held)
          throw new HttpError(
            404,
            'object_not_found',
            `no ${module} object ${country_code}/${party_id}/${object_id} of partner ${partner.id}`,
          );
        return { data: held };
      },
    }),
  ];
}
