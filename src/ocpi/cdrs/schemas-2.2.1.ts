import Type, { type Static } from '#typebox';
import {
  CountryCode,
  Currency,
  DateTime,
  NonNegative,
  ObjectId,
  ObjectId39,
  OpenObject,
  PartyId,
  ciString,
  ocpiString,
} from '../core/schemas.js';
import { placeFields } from '../locations/schemas-2.2.1.js';
import { ConnectorFormat, ConnectorStandard, PowerType221 } from '../locations/schemas.js';
import { AuthMethod, CdrToken, ChargingPeriod } from '../sessions/schemas-2.2.1.js';
import { Price, TariffAsStored } from '../tariffs/schemas-2.2.1.js';
import { titled } from '../../gateway/openapi.js';

/** OCPI 2.2.1 CDRs (OCPI 2.2.1 mod_cdrs.asciidoc). CDRs of either version are stored as they came. */

/** CDR ids are CiString(39) in 2.2.1: printable ASCII, not `.` or `..` alone (core/schemas.ts). */
export const CdrId = ObjectId39;
/**
 * What our credit CDRs append to the id of the CDR they credit (mod_cdrs "Credit CDRs" gives `-C`
 * as its example; src/roaming/credit.ts): a CDR id of 36 characters and this fit CiString(39).
 */
export const CREDIT_SUFFIX = '-C';

export const CdrLocation = titled(
  'CdrLocation',
  Type.Object({
    id: ObjectId,
    ...placeFields,
    evse_uid: ObjectId,
    evse_id: ciString(48),
    connector_id: ObjectId,
    connector_standard: ConnectorStandard,
    connector_format: ConnectorFormat,
    connector_power_type: PowerType221,
  }),
);

export const Cdr = titled(
  'Cdr221',
  Type.Object({
    country_code: CountryCode,
    party_id: PartyId,
    id: CdrId,
    start_date_time: DateTime,
    end_date_time: DateTime,
    session_id: Type.Optional(ObjectId),
    cdr_token: CdrToken,
    auth_method: AuthMethod,
    authorization_reference: Type.Optional(ObjectId),
    cdr_location: CdrLocation,
    meter_id: Type.Optional(ocpiString(255)),
    currency: Currency,
    tariffs: Type.Optional(Type.Array(TariffAsStored)),
    charging_periods: Type.Array(ChargingPeriod, { minItems: 1 }),
    signed_data: Type.Optional(OpenObject),
    total_cost: Price,
    total_fixed_cost: Type.Optional(Price),
    // kWh and hours; a credit CDR negates only its costs (mod_cdrs "Credit CDRs")
    total_energy: NonNegative,
    total_energy_cost: Type.Optional(Price),
    total_time: NonNegative,
    total_time_cost: Type.Optional(Price),
    total_parking_time: Type.Optional(NonNegative),
    total_parking_cost: Type.Optional(Price),
    total_reservation_cost: Type.Optional(Price),
    remark: Type.Optional(ocpiString(255)),
    invoice_reference_id: Type.Optional(CdrId),
    credit: Type.Optional(Type.Boolean()),
    credit_reference_id: Type.Optional(CdrId),
    home_charging_compensation: Type.Optional(Type.Boolean()),
    last_updated: DateTime,
  }),
);
export type Cdr = Static<typeof Cdr>;

/**
 * A CDR a partner CPO posts our cdrs Receiver: its total_energy may be negative, energy fed back
 * to the grid (mod_cdrs CdrDimensionType ENERGY: "When negative, more energy was feed into the
 * grid"); it is stored, and its check is unpriced. The CDRs we send never have one.
 */
export const ReceivedCdr = titled('ReceivedCdr221', Type.Object({ ...Cdr.properties, total_energy: Type.Number() }));

export const CdrPath = Type.Object({ country_code: CountryCode, party_id: PartyId, cdr_id: CdrId });
