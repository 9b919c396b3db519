import Type, { type Static } from '#typebox';
import { DateTime, ObjectId, openEnum } from '../core/schemas.js';
import { Location } from '../locations/schemas-2.1.1.js';
import { ChargingPeriod } from '../sessions/schemas-2.1.1.js';
import { Tariff } from '../tariffs/schemas-2.1.1.js';

/** OCPI 2.1.1 CDRs (OCPI 2.1.1 mod_cdrs.md). */

export const Cdr = Type.Object({
  id: ObjectId,
  start_date_time: DateTime,
  stop_date_time: DateTime,
  auth_id: Type.String({ maxLength: 36 }),
  auth_method: openEnum(['AUTH_REQUEST', 'WHITELIST']),
  location: Location,
  meter_id: Type.Optional(Type.String()),
  currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217' }),
  tariffs: Type.Optional(Type.Array(Tariff)),
  charging_periods: Type.Array(ChargingPeriod, { minItems: 1 }),
  total_cost: Type.Number(),
  total_energy: Type.Number(),
  total_time: Type.Number(),
  total_parking_time: Type.Optional(Type.Number()),
  remark: Type.Optional(Type.String({ maxLength: 255 })),
  last_updated: DateTime,
});
export type Cdr = Static<typeof Cdr>;
