import Type, { type TSchema } from '#typebox';
import {
  DateTime,
  DisplayText,
  GeoLocation,
  ObjectId,
  OpenObject,
  TimeOfDay,
  ciString,
  ocpiString,
  oneOf,
  openEnum,
} from '../core/schemas.js';
import { titled } from '../../gateway/openapi.js';

/**
 * Location fields both OCPI versions share (OCPI 2.2.1 mod_locations.asciidoc, OCPI 2.1.1
 * mod_locations.md): the enumerations of EVSEs and connectors, and the EVSE itself, whose
 * connectors are each version's.
 */

/** RegularHours: weekday 1 (Monday) to 7 (Sunday), the period's begin and end as hh:mm. */
export const RegularHours = titled(
  'RegularHours',
  Type.Object({
    weekday: Type.Integer({ minimum: 1, maximum: 7 }),
    period_begin: TimeOfDay,
    period_end: TimeOfDay,
  }),
);
/**
 * Hours (2.2.1): `twentyfourseven` and the regular hours; the exceptional openings and closings
 * are objects of any shape (docs/OCPI.md, Decisions 14).
 */
export const Hours = titled(
  'Hours',
  Type.Object({
    twentyfourseven: Type.Boolean(),
    regular_hours: Type.Optional(Type.Array(RegularHours)),
  }),
);
/** Hours (2.1.1): `regular_hours` or `twentyfourseven`, one of the two (docs/OCPI.md, Decisions 37). */
export const Hours211 = Type.Union([
  Type.Object({ twentyfourseven: Type.Boolean(), regular_hours: Type.Optional(Type.Array(RegularHours)) }),
  Type.Object({ twentyfourseven: Type.Optional(Type.Boolean()), regular_hours: Type.Array(RegularHours) }),
]);

export const EvseStatus = openEnum(['AVAILABLE', 'BLOCKED', 'CHARGING', 'INOPERATIVE']);
/** The capabilities 2.1.1 names (mod_locations 4.2); 2.2.1 adds others (mappers.ts `evseTo211`). */
export const CAPABILITIES_211 = [
  'CHARGING_PROFILE_CAPABLE',
  'CREDIT_CARD_PAYABLE',
  'REMOTE_START_STOP_CAPABLE',
  'RESERVABLE',
  'RFID_READER',
  'UNLOCK_CAPABLE',
] as const;
export const Capability = openEnum(CAPABILITIES_211);
export const ParkingRestriction = openEnum(['EV_ONLY', 'PLUGGED', 'DISABLED']);
export const ConnectorStandard = openEnum(['CHADEMO', 'DOMESTIC_A', 'DOMESTIC_B', 'IEC_62196_T2']);
export const ConnectorFormat = oneOf(['SOCKET', 'CABLE']);
/** 2.1.1 power types; 2.2.1 adds two-phase supplies (served as AC_1_PHASE in 2.1.1, Decisions 36). */
export const PowerType = oneOf(['AC_1_PHASE', 'AC_3_PHASE', 'DC']);
export const PowerType221 = oneOf(['AC_1_PHASE', 'AC_2_PHASE', 'AC_2_PHASE_SPLIT', 'AC_3_PHASE', 'DC']);
export const Facility = openEnum(['HOTEL', 'RESTAURANT', 'CAFE', 'BUS_STOP', 'PARKING_LOT']);

/**
 * EVSEPatch of both versions: every field optional (open enumerations as strings), connectors as
 * connector patches (merged by id).
 */
export function evsePatchWith<E extends ReturnType<typeof evseWith>, C extends TSchema>(evse: E, connectorPatch: C) {
  return Type.Partial(
    Type.Object({
      ...evse.properties,
      capabilities: Type.Array(Type.String()),
      parking_restrictions: Type.Array(Type.String()),
      connectors: Type.Array(connectorPatch),
    }),
  );
}

/** The EVSE of both versions: the fields are the same, the connectors are each version's. */
export function evseWith<C extends TSchema>(
  connector: C,
  geo: typeof GeoLocation = GeoLocation,
  uid: typeof ObjectId = ObjectId,
) {
  return Type.Object({
    uid,
    // string(48) in 2.1.1, CiString(48) in 2.2.1: an eMI3 EVSE ID is ASCII in both
    evse_id: Type.Optional(ciString(48)),
    status: EvseStatus,
    status_schedule: Type.Optional(Type.Array(OpenObject)),
    capabilities: Type.Optional(Type.Array(Capability)),
    connectors: Type.Array(connector),
    floor_level: Type.Optional(ocpiString(4)),
    coordinates: Type.Optional(geo),
    physical_reference: Type.Optional(ocpiString(16)),
    directions: Type.Optional(Type.Array(DisplayText)),
    parking_restrictions: Type.Optional(Type.Array(ParkingRestriction)),
    images: Type.Optional(Type.Array(OpenObject)),
    last_updated: DateTime,
  });
}
