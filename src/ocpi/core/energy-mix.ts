/**
 * EnergyMix.environ_impact names an impact's category `source` in 2.1.1 (mod_locations
 * EnvironmentalImpact: source, amount) and `category` in 2.2.1. The stored 2.2.1 shape holds
 * `category`; each version is given its own name on the way in and out. An entry of any other
 * shape is left as it is (docs/OCPI.md Decisions 14).
 */
export function energyMixAs<M extends object>(version: '2.1.1' | '2.2.1', mix: M): M {
  if (!('environ_impact' in mix) || !Array.isArray(mix.environ_impact)) return mix;
  const [from, to] = version === '2.1.1' ? (['category', 'source'] as const) : (['source', 'category'] as const);
  const renamed = (mix.environ_impact as unknown[]).map((entry) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return entry;
    const e = entry as Record<string, unknown>;
    if (!(from in e) || to in e) return entry;
    const { [from]: value, ...rest } = e;
    return { ...rest, [to]: value };
  });
  return { ...mix, environ_impact: renamed };
}

/** `holder` (a location, a tariff) with its energy mix, if any, named as `version` names it. */
export function withEnergyMixAs<H extends { energy_mix?: object | undefined }>(
  version: '2.1.1' | '2.2.1',
  holder: H,
): H {
  return holder.energy_mix ? { ...holder, energy_mix: energyMixAs(version, holder.energy_mix) } : holder;
}
