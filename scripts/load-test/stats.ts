/** Latency histogram with fixed log-spaced buckets: cheap to merge across generator processes. */
export const BUCKET_BOUNDS_MS: number[] = (() => {
  const b: number[] = [];
  for (let v = 0.25; v < 120_000; v *= 1.15) b.push(Number(v.toFixed(3)));
  return b;
})();

export function emptyHistogram(): number[] {
  return new Array<number>(BUCKET_BOUNDS_MS.length + 1).fill(0);
}

export function record(h: number[], ms: number): void {
  let lo = 0;
  let hi = BUCKET_BOUNDS_MS.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((BUCKET_BOUNDS_MS[mid] ?? Infinity) < ms) lo = mid + 1;
    else hi = mid;
  }
  h[lo] = (h[lo] ?? 0) + 1;
}

export function merge(into: number[], from: number[]): void {
  for (let i = 0; i < from.length; i++) into[i] = (into[i] ?? 0) + (from[i] ?? 0);
}

/** Upper bound of the bucket holding the q-quantile (ms). */
export function quantile(h: number[], q: number): number {
  const total = h.reduce((a, b) => a + b, 0);
  if (total === 0) return 0;
  let seen = 0;
  for (let i = 0; i < h.length; i++) {
    seen += h[i] ?? 0;
    if (seen >= q * total) return BUCKET_BOUNDS_MS[i] ?? BUCKET_BOUNDS_MS[BUCKET_BOUNDS_MS.length - 1] ?? 0;
  }
  return 0;
}

/** Resident set size of a local process in bytes (Linux /proc). */
export async function rssOf(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(status);
  return m?.[1] ? Number(m[1]) * 1024 : 0;
}
