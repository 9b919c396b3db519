/**
 * Whether the JSON text in `bytes` nests arrays and objects deeper than `max`, read without
 * parsing. A partner's reply within the size limit can still be 100,000 levels deep: JSON.parse
 * takes it, but JSON.stringify (storing a pulled location) and any recursive walk over it throw
 * RangeError, which surfaced as a 500. Brackets inside strings do not count.
 */
export function nestedDeeperThan(bytes: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === 0x5c) i++; // backslash: the next byte is escaped
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x5b || b === 0x7b) {
      depth++;
      if (depth > max) return true;
    } else if (b === 0x5d || b === 0x7d) depth--;
  }
  return false;
}
