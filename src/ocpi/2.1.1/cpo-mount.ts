import { route, type MountSpec } from '../../gateway/route-table.js';
import type { OcpiCaller } from '../auth.js';
import { Envelope } from '../common/schemas.js';
import type { OcpiContext } from '../context.js';
import { unknownToken } from '../envelope.js';
import { locationTo211 } from '../mappers.js';
import { callerOwnPath, listRoute, ocpiMount, versionDetailsRoute, type OcpiRoute } from '../mount-kit.js';
import * as S from './schemas.js';

export const CPO_211_PREFIX = '/ocpi/cpo/2.1.1';

/** CPO mount, OCPI 2.1.1 (spec Endpoints "CPO mount, version 2.1.1"; commands come later). */
export function cpo211Mount(ctx: OcpiContext): MountSpec<OcpiCaller> {
  const routes: OcpiRoute[] = [
    listRoute(ctx, {
      path: '/locations',
      module: 'locations',
      summary: 'Our published locations (publish: true), paged (date_from inclusive, date_to exclusive)',
      version: '2.1.1',
      store: ctx.stores.locations,
      owner: 'ours',
      item: S.Location,
      render: { name: '2.1.1', as: locationTo211 },
      publishedOnly: true,
    }),
    route({
      method: 'PATCH',
      path: '/tokens/:country_code/:party_id/:token_uid',
      module: 'tokens',
      summary: "Partial update of a token of the caller's party",
      params: S.TokenPath,
      body: S.TokenPatch,
      response: Envelope(S.Token),
      responses: { 404: 'unknown token (status_code 2004)' },
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const patch = req.body;
        const uid = req.params.token_uid;
        // TokenPatch may omit last_updated (spec: every field optional): the time of the change then
        const updated = await ctx.stores.tokens.update({ ...party, id: uid }, (existing) => ({
          ...existing,
          ...patch,
          uid,
          last_updated: patch.last_updated ?? new Date().toISOString(),
        }));
        if (!updated) throw unknownToken();
        return { data: updated };
      },
    }),
  ];
  routes.unshift(
    versionDetailsRoute(ctx, {
      routes,
      version: '2.1.1',
      role: 'CPO',
      prefix: CPO_211_PREFIX,
      summary: 'Version details: the module endpoints of this mount',
      detail: S.VersionDetail,
    }),
  );
  return ocpiMount(ctx, {
    name: 'ocpi-cpo-2.1.1',
    prefix: CPO_211_PREFIX,
    version: '2.1.1',
    accept: 'raw',
    description: 'OCPI 2.1.1, CPO role',
    routes,
  });
}
