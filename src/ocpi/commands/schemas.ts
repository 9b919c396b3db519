import Type, { type Static, type TSchema } from '#typebox';
import { DateTime, DisplayText, ObjectId, ObjectId39, oneOf } from '../core/schemas.js';
import * as T211 from '../tokens/schemas-2.1.1.js';
import * as T221 from '../tokens/schemas-2.2.1.js';
import { titled } from '../../gateway/openapi.js';

/**
 * The commands module of both versions (OCPI 2.1.1 mod_commands.md, 2.2.1 mod_commands.asciidoc):
 * the requests an eMSP sends a CPO, the CPO's immediate answer, and the result it POSTs to the
 * request's `response_url` later.
 */

export const ResponseUrl = Type.String({ minLength: 1, maxLength: 255, description: 'absolute http(s) URL' });

export const COMMANDS_221 = [
  'CANCEL_RESERVATION',
  'RESERVE_NOW',
  'START_SESSION',
  'STOP_SESSION',
  'UNLOCK_CONNECTOR',
] as const;
export const COMMANDS_211 = ['RESERVE_NOW', 'START_SESSION', 'STOP_SESSION', 'UNLOCK_CONNECTOR'] as const;
export type CommandType = (typeof COMMANDS_221)[number];

const stopSession = { response_url: ResponseUrl, session_id: ObjectId };
const unlockConnector = {
  response_url: ResponseUrl,
  location_id: ObjectId,
  evse_uid: ObjectId,
  connector_id: ObjectId,
};

/** The request body of each command, 2.2.1. */
export const Requests221 = {
  START_SESSION: Type.Object({
    response_url: ResponseUrl,
    token: T221.Token,
    location_id: ObjectId,
    evse_uid: Type.Optional(ObjectId),
    connector_id: Type.Optional(ObjectId),
    authorization_reference: Type.Optional(ObjectId),
  }),
  STOP_SESSION: Type.Object(stopSession),
  RESERVE_NOW: Type.Object({
    response_url: ResponseUrl,
    token: T221.Token,
    expiry_date: DateTime,
    reservation_id: ObjectId,
    location_id: ObjectId,
    evse_uid: Type.Optional(ObjectId),
    authorization_reference: Type.Optional(ObjectId),
  }),
  CANCEL_RESERVATION: Type.Object({ response_url: ResponseUrl, reservation_id: ObjectId }),
  UNLOCK_CONNECTOR: Type.Object(unlockConnector),
} satisfies Record<CommandType, TSchema>;

/** The request body of each command, 2.1.1 (no CANCEL_RESERVATION; reservation_id is an integer). */
export const Requests211 = {
  START_SESSION: Type.Object({
    response_url: ResponseUrl,
    token: T211.Token,
    // 2.1.1 location ids and EVSE uids have 39 characters (docs/OCPI.md, Decisions 34)
    location_id: ObjectId39,
    evse_uid: Type.Optional(ObjectId39),
  }),
  STOP_SESSION: Type.Object(stopSession),
  RESERVE_NOW: Type.Object({
    response_url: ResponseUrl,
    token: T211.Token,
    expiry_date: DateTime,
    reservation_id: Type.Integer(),
    // 2.1.1 location ids and EVSE uids have 39 characters (docs/OCPI.md, Decisions 34)
    location_id: ObjectId39,
    evse_uid: Type.Optional(ObjectId39),
  }),
  UNLOCK_CONNECTOR: Type.Object({ ...unlockConnector, location_id: ObjectId39, evse_uid: ObjectId39 }),
} satisfies Record<(typeof COMMANDS_211)[number], TSchema>;

export const ResponseType221 = oneOf(['NOT_SUPPORTED', 'REJECTED', 'ACCEPTED', 'UNKNOWN_SESSION']);
export const ResponseType211 = oneOf(['NOT_SUPPORTED', 'REJECTED', 'ACCEPTED', 'TIMEOUT', 'UNKNOWN_SESSION']);
export type ResponseType = Static<typeof ResponseType211>;

/** The CPO's immediate answer, 2.2.1 (`timeout`: seconds the eMSP may wait for the result). */
export const CommandResponse221 = titled(
  'CommandResponse221',
  Type.Object({
    result: ResponseType221,
    timeout: Type.Integer({ minimum: 0 }),
    message: Type.Optional(Type.Array(DisplayText)),
  }),
);
/** The CPO's immediate answer, and the result it POSTs later, 2.1.1. */
export const CommandResponse211 = titled('CommandResponse211', Type.Object({ result: ResponseType211 }));

/** The result the CPO POSTs to `response_url`, 2.2.1. */
export const CommandResult221 = titled(
  'CommandResult221',
  Type.Object({
    result: oneOf([
      'ACCEPTED',
      'CANCELED_RESERVATION',
      'EVSE_OCCUPIED',
      'EVSE_INOPERATIVE',
      'FAILED',
      'NOT_SUPPORTED',
      'REJECTED',
      'TIMEOUT',
      'UNKNOWN_RESERVATION',
    ]),
    message: Type.Optional(Type.Array(DisplayText)),
  }),
);

/** A command our eMSP sent to a partner CPO, as we keep it until (and after) its result. */
export interface SentCommand {
  uid: string;
  command: string;
  /** the CPO it was sent to (its party); only that CPO may POST the result */
  partner: { id: string; country_code: string; party_id: string };
  version: '2.1.1' | '2.2.1';
  /** what we POSTed, response_url included */
  request: Record<string, unknown>;
  /** the CPO's immediate answer; null until it came (or when the call failed) */
  response: Record<string, unknown> | null;
  /** why the call failed, when it did */
  error: string | null;
  /** the result the CPO POSTed to our response_url; null until then */
  result: Record<string, unknown> | null;
  sent_at: string;
  result_at: string | null;
  last_updated: string;
}
