import { randomUUID } from 'node:crypto';
import Type, { type TObject } from '#typebox';
import { HttpError, RequestValidationError } from '../../gateway/errors.js';
import { pageHeaders, Paging } from '../../gateway/operator-paging.js';
import { route } from '../../gateway/route-table.js';
import { RequestPart } from '../../gateway/validation.js';
import { compileLazily } from '../../lazy-compile.js';
import { endpointOf, PartnerCallError } from '../client/partner-client.js';
import type { PartyIdentity } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import type { OperatorRoute } from '../core/mount-kit.js';
import type { PartnerRow } from '../core/partners.js';
import { ObjectId } from '../core/schemas.js';
import {
  COMMANDS_221,
  CommandResponse211,
  CommandResponse221,
  Requests211,
  Requests221,
  type CommandType,
  type SentCommand,
} from '../commands/schemas.js';
import { tokenTo211 } from '../tokens/mappers.js';
import { badGateway, registeredLink } from './handshake.js';
import { IdPath, partnerOf } from './partner-of.js';

/**
 * Our eMSP's commands to a partner CPO (docs/OCPI.md "Commands"): the operator names the command
 * and its fields; we add the `response_url` (our eMSP mount of the partner's commands version),
 * keep the command before calling, POST it to the CPO's commands endpoint and keep its immediate
 * answer. The result the CPO POSTs later lands on the same command (commands/emsp-results.ts).
 */

const CommandPath = Type.Object({
  id: IdPath.properties.id,
  command: Type.Union(COMMANDS_221.map((c) => Type.Literal(c))),
});
const UidPath = Type.Object({ uid: ObjectId });
/** The operator's fields: those of the command without `response_url`; `token_uid` names one of our tokens. */
const CommandFields = Type.Object(
  { token_uid: Type.Optional(ObjectId) },
  {
    // closed per version in sendCommand: the partner's version decides which fields there are
    additionalProperties: true,
    description: "the fields of the OCPI command request in the partner's version, response_url left out",
  },
);
const SentCommandOut = Type.Object({
  uid: Type.String(),
  command: Type.String(),
  partner: Type.Object({ id: Type.String(), country_code: Type.String(), party_id: Type.String() }),
  version: Type.String(),
  request: Type.Record(Type.String(), Type.Unknown()),
  response: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  result: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  sent_at: Type.String(),
  result_at: Type.Union([Type.String(), Type.Null()]),
  last_updated: Type.String(),
  result_due_at: Type.Union([Type.String(), Type.Null()], {
    description:
      'while no result came: when the CPO said it would (2.2.1 CommandResponse timeout, from its answer); null otherwise',
  }),
  result_overdue: Type.Boolean({ description: 'true once result_due_at has passed without a result' }),
});
type SentCommandView = SentCommand & { result_due_at: string | null; result_overdue: boolean };

/**
 * A sent command as the operator reads it: with the time its result was due and whether that has
 * passed. OCPI 2.2.1 lets the eMSP assume no result will come after the CommandResponse's
 * `timeout`; nothing is written then, the CPO's late result is still taken.
 */
function viewOf(sent: SentCommand, now = Date.now()): SentCommandView {
  const response = sent.response as { result?: unknown; timeout?: unknown } | null;
  const timeout = sent.result === null && response?.result === 'ACCEPTED' ? response.timeout : undefined;
  const due = typeof timeout === 'number' && timeout > 0 ? Date.parse(sent.last_updated) + timeout * 1000 : null;
  return {
    ...sent,
    result_due_at: due === null ? null : new Date(due).toISOString(),
    result_overdue: due !== null && now > due,
  };
}

const requestParts = new Map<string, RequestPart>();
const commandSchemas = (version: OcpiVersion): Partial<Record<CommandType, TObject>> =>
  version === '2.2.1' ? Requests221 : Requests211;
/**
 * The version's request schema of `command`, closed, compiled once. What goes out on a version is
 * that version's object (docs/OCPI.md, Decisions 27 and 42): a field it does not have is refused,
 * not sent (a `connector_id` 2.1.1 StartSession lacks, a misspelt name). Only our own requests are
 * closed; the CPO Receiver takes the open schemas.
 */
function requestPart(version: OcpiVersion, command: CommandType): RequestPart | undefined {
  const schema = commandSchemas(version)[command];
  if (!schema) return undefined;
  const key = `${version} ${command}`;
  let part = requestParts.get(key);
  if (!part) {
    part = new RequestPart('body', Type.Object(schema.properties, { additionalProperties: false }));
    requestParts.set(key, part);
  }
  return part;
}

/**
 * The request of `command` in `version` from the operator's fields: 422 for a field the version's
 * object has not, naming it; one the other version has says so (2.1.1 START_SESSION `connector_id`).
 */
function requestOf(
  part: RequestPart,
  at: { version: OcpiVersion; command: CommandType },
  fields: Record<string, unknown>,
): Record<string, unknown> {
  try {
    return part.parseFields(fields);
  } catch (err) {
    if (!(err instanceof RequestValidationError)) throw err;
    const other = commandSchemas(at.version === '2.2.1' ? '2.1.1' : '2.2.1')[at.command]?.properties ?? {};
    const detail = err.detail.map((d) => {
      const [where, name, ...inner] = d.loc;
      if (d.type !== 'extra_forbidden' || where !== 'body' || typeof name !== 'string' || inner.length > 0) return d;
      const msg = Object.hasOwn(other, name)
        ? `OCPI ${at.version}, the partner's version of commands, has no ${name} in ${at.command}`
        : `${at.command} has no field ${name} in OCPI ${at.version}`;
      return { ...d, msg, ctx: { ...d.ctx, version: at.version } };
    });
    throw new RequestValidationError(detail.map(withoutResponseUrl));
  }
}

/**
 * An error's echo of the body without the `response_url` we added: the operator did not send it,
 * and it names a command that is never kept when the fields are refused.
 */
function withoutResponseUrl<D extends { input?: unknown }>(d: D): D {
  const input = d.input;
  if (typeof input !== 'object' || input === null || !Object.hasOwn(input, 'response_url')) return d;
  const { response_url: _added, ...given } = input as Record<string, unknown>;
  return { ...d, input: given };
}

const checkResponse221 = compileLazily(CommandResponse221);
const checkResponse211 = compileLazily(CommandResponse211);

/**
 * The command's fields with `token_uid` replaced by our token of that uid, in the version's shape.
 * A token given whole is checked against ours of its uid the same way (docs/OCPI.md, Decisions
 * 27): the CPO takes it as authorized by us (2.2.1 StartSession), so one of another party, or a
 * uid we have no token of, would start a session billed to whoever that is.
 */
async function withToken(
  ctx: OcpiContext,
  fields: Record<string, unknown>,
  version: OcpiVersion,
): Promise<Record<string, unknown>> {
  const { token_uid: uid, ...rest } = fields;
  const inline = typeof uid === 'string' ? {} : givenToken(rest.token);
  const named = typeof uid === 'string' ? uid : inline.uid;
  if (named === undefined) return rest;
  if (inline.party && !ctx.isOwn(inline.party))
    throw new HttpError(
      404,
      'token_not_found',
      `token ${named} is of ${inline.party.country_code} ${inline.party.party_id}: we have no token of another party`,
    );
  const ours = await ctx.stores.tokens.get({ ...ctx.ownParty(), id: named });
  if (!ours) throw new HttpError(404, 'token_not_found', `we have no token ${named}`);
  // the CPO would be asked to charge (or reserve) on a card we refuse ourselves; a token given
  // whole said valid while we block it went to the CPO all the same
  if (!ours.valid || inline.valid === false)
    throw new HttpError(409, 'token_not_valid', `token ${named} is not valid (valid: false): make it valid first`);
  // a token given whole is sent as given
  if (typeof uid !== 'string') return rest;
  return { ...rest, token: version === '2.2.1' ? ours : tokenTo211(ours) };
}

/** The `uid`, `valid` and party (2.2.1) of a token given whole in a command's fields, where it has them. */
function givenToken(token: unknown): {
  uid?: string;
  valid?: boolean;
  party?: { country_code: string; party_id: string };
} {
  if (typeof token !== 'object' || token === null) return {};
  const field = (name: string): unknown => (name in token ? (token as Record<string, unknown>)[name] : undefined);
  const [uid, valid, country_code, party_id] = ['uid', 'valid', 'country_code', 'party_id'].map(field);
  return {
    ...(typeof uid === 'string' ? { uid } : {}),
    ...(typeof valid === 'boolean' ? { valid } : {}),
    // a 2.1.1 Token names no party: it is taken as ours, and its uid decides
    ...(typeof country_code === 'string' || typeof party_id === 'string'
      ? {
          party: {
            country_code: typeof country_code === 'string' ? country_code : '',
            party_id: typeof party_id === 'string' ? party_id : '',
          },
        }
      : {}),
  };
}

/**
 * A RESERVE_NOW whose `expiry_date` (when the reservation ends, mod_commands ReserveNow) has
 * passed reserves nothing: 422 before any call, as our own CPO would refuse it.
 */
function refusePastExpiry(expiry: unknown): void {
  if (typeof expiry !== 'string' || Date.parse(expiry) > Date.now()) return;
  throw new RequestValidationError([
    {
      loc: ['body', 'expiry_date'],
      msg: 'expiry_date has passed: a reservation that ends before it is made reserves nothing',
      type: 'value_error',
      input: expiry,
      ctx: {},
    },
  ]);
}

/** The CPO partner's commands endpoint and our token for it (409 when there is none). */
async function commandsLink(ctx: OcpiContext, partner: PartnerRow) {
  if (partner.role !== 'CPO' && !partner.parties.some((p) => p.role === 'CPO'))
    throw new HttpError(409, 'not_a_cpo', `partner ${partner.id} is an eMSP: commands go to a CPO`);
  const link = await registeredLink(ctx, partner);
  // a platform may list both interfaces of commands: ours go to its Receiver
  const endpoint = endpointOf(link.partner.endpoints, 'commands', 'RECEIVER');
  if (!endpoint) throw new HttpError(409, 'no_commands_endpoint', 'the partner lists no commands endpoint');
  return { endpoint, theirToken: link.theirToken };
}

/**
 * The party a command is addressed to (2.2.1 OCPI-to-*, transport_and_format "Message Routing":
 * the receiving party, not the platform): of the partner's CPO parties, the one whose location
 * (`location_id`) or session (`session_id`) we hold; the only one when there is one; else the
 * onboarded party. A platform speaking for several CPOs was sent every command addressed to its
 * onboarded party, and one that routes by the header looked the location up under the wrong CPO.
 */
async function receivingParty(
  ctx: OcpiContext,
  partner: PartnerRow,
  fields: Record<string, unknown>,
): Promise<PartyIdentity> {
  const own = { country_code: partner.country_code, party_id: partner.party_id };
  const cpos = [...(partner.role === 'CPO' ? [own] : []), ...partner.parties.filter((p) => p.role === 'CPO')].map(
    (p) => ({ country_code: p.country_code, party_id: p.party_id }),
  );
  const [first] = cpos;
  if (!first) return own;
  if (cpos.length === 1) return first;
  const held = async (store: 'locations' | 'sessions', id: unknown): Promise<PartyIdentity | undefined> => {
    if (typeof id !== 'string') return undefined;
    for (const p of cpos) if (await ctx.stores[store].getAnyCase({ ...p, id })) return p;
    return undefined;
  };
  return (await held('locations', fields.location_id)) ?? (await held('sessions', fields.session_id)) ?? first;
}

/** The request object of `command` in the partner's version of commands; 422 when it has none. */
function partOf(version: OcpiVersion, command: CommandType): RequestPart {
  const part = requestPart(version, command);
  if (part) return part;
  throw new RequestValidationError([
    {
      loc: ['path', 'command'],
      msg: `OCPI ${version}, the partner's version of commands, has no ${command}`,
      type: 'literal_error',
      input: command,
      ctx: { version },
    },
  ]);
}

async function sendCommand(
  ctx: OcpiContext,
  origin: string,
  partner: PartnerRow,
  command: CommandType,
  fields: Record<string, unknown>,
): Promise<SentCommand> {
  const { endpoint, theirToken } = await commandsLink(ctx, partner);
  const { version } = endpoint;
  const part = partOf(version, command);
  const uid = randomUUID();
  const party = { country_code: partner.country_code, party_id: partner.party_id };
  const to = await receivingParty(ctx, partner, fields);
  const response_url = `${origin}/ocpi/emsp/${version}/commands/${command}/${uid}`;
  const request = requestOf(part, { version, command }, { ...(await withToken(ctx, fields, version)), response_url });
  if (command === 'RESERVE_NOW') refusePastExpiry(request.expiry_date);
  const now = new Date().toISOString();
  const key = { ...ctx.ownParty(), id: uid };
  // kept before the call: a result the CPO POSTs before its answer reaches us finds the command
  await ctx.stores.commands.put(key, {
    uid,
    command,
    partner: { id: partner.id, ...party },
    version,
    request,
    response: null,
    error: null,
    result: null,
    sent_at: now,
    result_at: null,
    last_updated: now,
  });
  const record = (change: Pick<SentCommand, 'response' | 'error'>) =>
    ctx.stores.commands.update(key, (sent) => ({ ...sent, ...change, last_updated: new Date().toISOString() }));
  try {
    const { envelope } = await ctx.client.data('POST', `${endpoint.url}/${command}`, theirToken, version, request, {
      route: { from: ctx.own, to },
    });
    const data: unknown = envelope.data;
    const valid = version === '2.2.1' ? checkResponse221.Check(data) : checkResponse211.Check(data);
    if (!valid || typeof data !== 'object' || data === null)
      throw new PartnerCallError(3001, 'unexpected data', {
        message: 'the partner answered without a CommandResponse',
      });
    return (await record({ response: { ...data }, error: null })) ?? (await sentCommand(ctx, key));
  } catch (err) {
    const error =
      err instanceof PartnerCallError ? err.operatorMessage() : err instanceof Error ? err.message : String(err);
    await record({ response: null, error });
    // the command is kept (its result may still come to its response_url): its uid finds it in /v1/commands
    return badGateway(ctx, err, { uid });
  }
}

async function sentCommand(ctx: OcpiContext, key: { country_code: string; party_id: string; id: string }) {
  const sent = await ctx.stores.commands.get(key);
  if (!sent) throw new HttpError(404, 'command_not_found', `no command ${key.id}`);
  return sent;
}

/** POST /partners/{id}/commands/{command}, GET /commands and GET /commands/{uid}. */
export function partnerCommandRoutes(ctx: OcpiContext): OperatorRoute[] {
  return [
    route({
      method: 'GET',
      path: '/commands',
      summary: 'The commands we sent partner CPOs, the latest change first: request, immediate answer, result',
      query: Type.Object(Paging),
      response: Type.Array(SentCommandOut),
      handler: async (req) => {
        const { offset, limit } = req.query;
        const page = await ctx.stores.commands.list({ offset, limit }, [ctx.ownParty()], { newestFirst: true });
        const data = page.items.map((sent) => viewOf(sent));
        return { data, headers: pageHeaders(ctx.services.config, req, page.total, offset, limit) };
      },
    }),
    route({
      method: 'POST',
      path: '/partners/:id/commands/:command',
      summary: "Sends a command to a CPO partner; the answer is the CPO's immediate response, the result comes later",
      params: CommandPath,
      body: CommandFields,
      response: SentCommandOut,
      status: 201,
      responses: {
        201: 'sent: response holds the CPO answer',
        404: 'unknown partner, or token_uid (or a token given whole) names no token of ours',
        409: 'not a CPO, not registered, no commands endpoint, or token_uid names a token not valid',
        422: "invalid fields, a field the command's object lacks in the partner's version, a command that version lacks, or a RESERVE_NOW expiry_date that has passed",
        502: 'the partner could not be used (the command is kept with the error)',
      },
      handler: async (req) => {
        const partner = await partnerOf(ctx, req);
        const sent = await sendCommand(ctx, ctx.baseUrl(req.koa), partner, req.params.command, req.body);
        req.log.info({ partner: partner.id, command: sent.command, uid: sent.uid }, 'command sent');
        return { status: 201, data: viewOf(sent) };
      },
    }),
    route({
      method: 'GET',
      path: '/commands/:uid',
      summary: 'A command we sent a partner CPO: its request, the immediate answer and the result',
      params: UidPath,
      response: SentCommandOut,
      responses: { 404: 'unknown command' },
      handler: async (req) => ({ data: viewOf(await sentCommand(ctx, { ...ctx.ownParty(), id: req.params.uid })) }),
    }),
  ];
}
