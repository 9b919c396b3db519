/**
 * The energy register reading (Energy.Active.Import.Register, the default measurand in both
 * versions) of the last sample in a list of meter values, in Wh. Null when absent.
 */
export interface SampledReading {
  value: number;
  measurand: string | undefined;
  phase: string | undefined;
  /** Wh or kWh after the unit multiplier */
  unit: string | undefined;
  multiplier: number;
}

export function energyRegisterWh(samples: SampledReading[]): number | null {
  let found: number | null = null;
  for (const s of samples) {
    const measurand = s.measurand ?? 'Energy.Active.Import.Register';
    if (measurand !== 'Energy.Active.Import.Register' || s.phase !== undefined) continue;
    if (!Number.isFinite(s.value)) continue;
    const scaled = s.value * 10 ** s.multiplier;
    found = s.unit === 'kWh' ? scaled * 1000 : scaled;
  }
  return found;
}
