import Type, { type Static } from '#typebox';
import { Currency, DateTime, NonNegative, ObjectId, ocpiString, openEnum } from '../core/schemas.js';
import { Location } from '../locations/schemas-2.1.1.js';
import { ChargingPeriod } from '../sessions/schemas-2.1.1.js';
import { Tariff } from '../tariffs/schemas-2.1.1.js';
import { titled } from '../../gateway/openapi.js';

/** OCPI 2.1.1 CDRs (OCPI 2.1.1 mod_cdrs.md). */

export const Cdr = titled(
  'Cdr211',
  Type.Object({
    id: ObjectId,
    start_date_time: DateTime,
    stop_date_time: DateTime,
    // string(36), printable ASCII (types.md); in the 2.2.1 view, the CdrToken's uid and contract_id
    auth_id: ObjectId,
    auth_method: openEnum(['AUTH_REQUEST', 'WHITELIST']),
    location: Location,
    meter_id: Type.Optional(ocpiString(255)),
    currency: Currency,
    tariffs: Type.Optional(Type.Array(Tariff)),
    charging_periods: Type.Array(ChargingPeriod, { minItems: 1 }),
    total_cost: Type.Number(),
    // kWh and hours; a credit CDR negates only its costs (OCPI 2.2.1 mod_cdrs "Credit CDRs")
    total_energy: NonNegative,
    total_time: NonNegative,
    total_parking_time: Type.Optional(NonNegative),
    remark: Type.Optional(ocpiString(255)),
    last_updated: DateTime,
  }),
);
export type Cdr = Static<typeof Cdr>;
