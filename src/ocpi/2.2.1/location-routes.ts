import { route } from '../../gateway/route-table.js';
import { Envelope } from '../common/schemas.js';
import type { OcpiContext } from '../context.js';
import { assertOwnParty } from '../guards.js';
import { patchLocation, putLocation } from '../location-service.js';
import { callerOwnPath, type OcpiRoute } from '../mount-kit.js';
import * as S from './schemas.js';

/**
 * PUT and PATCH `/locations/{country_code}/{party_id}/{location_id}` (2.2.1): a partner pushes
 * one of its own locations. The eMSP 2.2.1 mount and the overview serve the same routes; only
 * their summaries differ.
 */
export function locationPushRoutes(ctx: OcpiContext, summaries: { put: string; patch: string }): OcpiRoute[] {
  return [
    route({
      method: 'PUT',
      path: '/locations/:country_code/:party_id/:location_id',
      module: 'locations',
      summary: summaries.put,
      params: S.LocationPath,
      body: S.Location,
      response: Envelope(S.LocationOut),
      handler: async (req) => {
        const { caller, party } = callerOwnPath(req, '2.2.1');
        const body = req.body;
        assertOwnParty(caller, body);
        return { data: await putLocation(ctx, party, req.params.location_id, body) };
      },
    }),
    route({
      method: 'PATCH',
      path: '/locations/:country_code/:party_id/:location_id',
      module: 'locations',
      summary: summaries.patch,
      params: S.LocationPath,
      body: S.LocationPatchBody,
      response: Envelope(S.LocationOut),
      responses: { 404: 'unknown location (status_code 2003)' },
      handler: async (req) => {
        const { caller, party } = callerOwnPath(req, '2.2.1');
        const body = req.body;
        assertOwnParty(caller, body);
        return { data: await patchLocation(ctx, party, req.params.location_id, body) };
      },
    }),
  ];
}
