/**
 * Whether a JSON text nests arrays and objects deeper than `max`, counted without parsing and
 * without recursion; stops at the first level past `max`. Brackets inside strings do not count.
 * Used on request bodies (BODY_MAX_DEPTH) and on partners' replies: a text within the size limit
 * can still be 100,000 levels deep, which JSON.parse takes but a validator, JSON.stringify or any
 * recursive walk turns into a RangeError (docs/SECURITY.md; before, a plain-text 500).
 */
export function jsonNestingExceeds(json: string | Uint8Array, max: number): boolean {
  const code = typeof json === 'string' ? (i: number) => json.charCodeAt(i) : (i: number) => json[i];
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = code(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}
