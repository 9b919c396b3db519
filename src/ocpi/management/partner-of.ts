import Type from '#typebox';
import { HttpError } from '../../gateway/errors.js';
import type { RouteRequest } from '../../gateway/route-table.js';
import type { OperatorAuth } from '../../gateway/csms-auth.js';
import type { OcpiContext } from '../core/context.js';
import type { PartnerRow } from '../core/partners.js';

/** The `{id}` of the operator's partner paths. */
export const IdPath = Type.Object({ id: Type.String({ format: 'uuid' }) });

/** The partner the path's `id` names, or 404. */
export async function partnerOf(ctx: OcpiContext, req: RouteRequest<OperatorAuth>): Promise<PartnerRow> {
  const partner = await ctx.partners.byId(String(req.params.id));
  if (!partner) throw new HttpError(404, 'partner_not_found', `no partner ${String(req.params.id)}`);
  return partner;
}
