import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Tariff } from '../../src/ocpi/tariffs/schemas-2.2.1.js';
import type { PricingCdr } from '../../src/tariffs/types.js';

/**
 * The public OCPI tariff test vectors (`../shared/vectors/tariffs`, SOURCE.txt there), read where
 * they are kept: `TARIFF_VECTORS_DIR`, or the `shared` folder beside the repository.
 */

export const VECTORS_DIR =
  process.env.TARIFF_VECTORS_DIR ??
  resolve(import.meta.dirname, '..', '..', '..', '..', 'shared', 'vectors', 'tariffs');

export const TOTALS = [
  'total_cost',
  'total_fixed_cost',
  'total_energy',
  'total_energy_cost',
  'total_time',
  'total_time_cost',
  'total_parking_time',
  'total_parking_cost',
  'total_reservation_cost',
] as const;

export interface Vector {
  name: string;
  tariff: Tariff;
  cdr: PricingCdr & Partial<Record<(typeof TOTALS)[number], unknown>>;
  time_zone: string;
}

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8'));

/** The tandemdrive vectors: each case's cdr*.json priced with its tariff.json, in UTC (their harness). */
export function tandemdriveVectors(): Vector[] {
  const base = join(VECTORS_DIR, 'tandemdrive-ocpi-tariffs', 'ocpi-tariffs', 'test_data');
  if (!existsSync(base)) return [];
  return readdirSync(base).flatMap((dir) =>
    readdirSync(join(base, dir))
      .filter((f) => f.startsWith('cdr') && f.endsWith('.json'))
      .map((f) => ({
        name: `${dir}/${f}`,
        tariff: readJson(join(base, dir, 'tariff.json')) as Tariff,
        cdr: readJson(join(base, dir, f)) as Vector['cdr'],
        time_zone: 'UTC',
      })),
  );
}

/** A CDR that carries its own tariff (the OCPI spec's example; the Codeberg issue 228 case). */
export function selfPricedVector(name: string, path: string, timeZone: string): Vector | undefined {
  const file = join(VECTORS_DIR, path);
  if (!existsSync(file)) return undefined;
  const cdr = readJson(file) as Vector['cdr'] & { tariffs: Tariff[] };
  const [tariff] = cdr.tariffs;
  if (!tariff) throw new Error(`${path} carries no tariff`);
  return { name, tariff, cdr, time_zone: timeZone };
}
