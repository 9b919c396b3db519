/**
 * The JSON pointer of the first string (value or property name) in `value` that holds a NUL
 * character, or undefined. The official schemas allow U+0000 in every string, but PostgreSQL
 * `text` cannot store it, so an idTag with a NUL failed every write of its session and the
 * charger got InternalError on every retry (docs/SECURITY.md). Iterative, so that a payload nested
 * thousands of levels deep (legal inside 2.0.1 customData) cannot overflow the stack.
 */
export function stringWithNul(value: unknown): string | undefined {
  const stack: Array<{ v: unknown; path: string }> = [{ v: value, path: '' }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { v, path } = item;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return path || '/';
    } else if (Array.isArray(v)) {
      v.forEach((x: unknown, i) => stack.push({ v: x, path: `${path}/${i}` }));
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        const at = `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
        // the pointer goes into a CALLERROR description: name the NUL rather than repeat it
        if (k.includes('\u0000')) return at.split('\u0000').join('\\u0000');
        stack.push({ v: x, path: at });
      }
    }
  }
  return undefined;
}

/**
 * Whether `value` nests arrays and objects more than `max` levels deep. Iterative, as
 * `stringWithNul`: 2.0.1 lets `customData` and DataTransfer's `data` hold anything, and a
 * payload thousands of levels deep is a few kilobytes.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<{ v: unknown; depth: number }> = [{ v: value, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { v, depth } = item;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= max) return true;
    for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push({ v: x, depth: depth + 1 });
  }
  return false;
}
