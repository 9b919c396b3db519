import Type, { type TSchema } from '#typebox';
import { route } from '../../gateway/route-table.js';
import { onboardedParty, type OcpiCaller } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import { invalidParameters, unknownPlace } from '../core/errors.js';
import { assertOwnParty, requireLink } from '../core/guards.js';
import type { OcpiRoute } from '../core/mount-kit.js';
import { Envelope } from '../core/schemas.js';
import type { ChargerCommandRequest } from './charger-port.js';
import {
  CommandResponse211,
  CommandResponse221,
  Requests211,
  Requests221,
  type CommandType,
  type ResponseType,
} from './schemas.js';

/**
 * The Receiver interface of the commands module (the CPO side): an eMSP asks us to start or stop
 * a session, reserve, cancel a reservation or unlock a connector on one of our locations. The
 * request is checked against what we hold (location, EVSE, connector, the caller's session),
 * then handed to our chargers through the roaming bridge (`ctx.chargers`, docs/ROAMING.md
 * "Commands"), and answered at once: ACCEPTED when the call reached the charge point, its result
 * POSTed to `response_url` later; REJECTED with the reason otherwise (no result follows).
 */

interface Decision {
  result: ResponseType;
  reason: string;
  timeout_s: number;
}

type CommandBody = ChargerCommandRequest['body'];

/** A `response_url` we could POST a result to: an absolute http(s) URL (else 2001). */
function assertResponseUrl(value: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url?.protocol === 'http:' || url?.protocol === 'https:') return;
  throw invalidParameters([
    { field: 'response_url', message: 'response_url must be an absolute http(s) URL', type: 'value_error.url' },
  ]);
}

/**
 * Where on our locations the command points: a location we do not hold (or do not publish), or
 * an EVSE or connector it does not have, is status_code 2003 "Unknown location" (both versions'
 * own example of it is "START_SESSION with unknown location"), HTTP 200 as the request reached
 * an endpoint that exists; the message names what is unknown.
 */
async function placeCheck(ctx: OcpiContext, body: CommandBody): Promise<void> {
  if (body.location_id === undefined) return;
  const location = await ctx.stores.locations.get({ ...ctx.ownParty(), id: body.location_id });
  if (!location || location.publish === false) throw unknownPlace(`location ${body.location_id}`);
  if (body.evse_uid === undefined) return;
  const evse = location.evses?.find((e) => e.uid === body.evse_uid);
  if (!evse) throw unknownPlace(`EVSE ${body.evse_uid} at location ${body.location_id}`);
  if (body.connector_id !== undefined && !evse.connectors.some((c) => c.id === body.connector_id))
    throw unknownPlace(`connector ${body.connector_id} of EVSE ${body.evse_uid}`);
}

const rejected = (reason: string): Decision => ({ result: 'REJECTED', reason, timeout_s: 0 });

async function decide(
  ctx: OcpiContext,
  caller: OcpiCaller,
  version: OcpiVersion,
  command: CommandType,
  body: CommandBody,
): Promise<Decision> {
  if (command === 'STOP_SESSION') {
    const session = await ctx.stores.sessions.getFor({ ...ctx.ownParty(), id: body.session_id ?? '' }, caller);
    if (!session)
      return { result: 'UNKNOWN_SESSION', reason: `no session ${body.session_id ?? ''} of yours here`, timeout_s: 0 };
  } else if (command !== 'CANCEL_RESERVATION') {
    // a 2.2.1 token names its eMSP: one the caller speaks for, else 2001 (as a token PUT)
    const token = body.token as { country_code?: string; party_id?: string } | undefined;
    if (version === '2.2.1' && token)
      assertOwnParty(caller, { country_code: token.country_code, party_id: token.party_id });
    await placeCheck(ctx, body);
    if (body.token?.valid === false) return rejected('the token is not valid');
  }
  if (!ctx.chargers) return rejected('no charge point is linked to this EVSE');
  const party = onboardedParty(caller);
  return ctx.chargers.execute({ partnerKey: `${party.country_code}-${party.party_id}`, version, command, body });
}

/** POST `/commands/{command}` of one command in `version`. */
function commandRoute(ctx: OcpiContext, version: OcpiVersion, command: CommandType, body: TSchema): OcpiRoute {
  return route({
    method: 'POST',
    path: `/commands/${command}`,
    module: 'commands',
    summary: `${command}: answered at once; a result follows at response_url when the command was ACCEPTED`,
    body,
    response: Envelope(version === '2.2.1' ? CommandResponse221 : CommandResponse211),
    handler: async (req) => {
      const caller = requireLink(req.auth, version);
      // each body schema has response_url, and the fields decide() reads where the command has them
      const request = req.body as CommandBody;
      assertResponseUrl(request.response_url);
      const { result, reason, timeout_s } = await decide(ctx, caller, version, command, request);
      req.log.info({ command, result, reason }, 'OCPI command answered');
      if (version === '2.1.1') return { data: { result } };
      return { data: { result, timeout: timeout_s, message: [{ language: 'en', text: reason }] } };
    },
  });
}

/** POST `/commands/{other}`: a command the version does not have is NOT_SUPPORTED (its routes come first). */
function otherCommandRoute(version: OcpiVersion): OcpiRoute {
  return route({
    method: 'POST',
    path: '/commands/:command',
    module: 'commands',
    summary: `A command OCPI ${version} does not have: NOT_SUPPORTED`,
    params: Type.Object({ command: Type.String({ minLength: 1, maxLength: 64 }) }),
    response: Envelope(version === '2.2.1' ? CommandResponse221 : CommandResponse211),
    handler: (req) => {
      requireLink(req.auth, version);
      if (version === '2.1.1') return { data: { result: 'NOT_SUPPORTED' } };
      const text = `OCPI ${version} has no command ${req.params.command}`;
      return { data: { result: 'NOT_SUPPORTED', timeout: 0, message: [{ language: 'en', text }] } };
    },
  });
}

/** The commands Receiver of `version`: one route per command the version has, NOT_SUPPORTED for others. */
export function commandsReceiver(ctx: OcpiContext, version: OcpiVersion): OcpiRoute[] {
  const requests: Partial<Record<CommandType, TSchema>> = version === '2.2.1' ? Requests221 : Requests211;
  return [
    ...Object.entries(requests).map(([command, body]) => commandRoute(ctx, version, command as CommandType, body)),
    otherCommandRoute(version),
  ];
}
