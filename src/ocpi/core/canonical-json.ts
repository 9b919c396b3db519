/**
 * The JSON of `value` with the members of every object in the order of their names: two objects
 * equal but for the order of their members (which JSON gives no meaning) have the same text. A
 * partner's retry serialized by another process or library may order them otherwise.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_name, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
