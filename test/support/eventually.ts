/**
 * Polls `check` until it returns a value (anything but undefined) or the time is up. The one
 * polling loop of the test suites; the helpers below are its other shapes.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  opts: { timeoutMs?: number; everyMs?: number; what?: string } = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${opts.what ?? 'condition'}: not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 50));
  }
}

/** Polls `read` until `ok` accepts its value; the error names the last value seen. */
export async function eventuallyMatches<T>(
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  let last: T | undefined;
  try {
    return await eventually(
      async () => {
        last = await read();
        return ok(last) ? last : undefined;
      },
      { timeoutMs },
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last value ${JSON.stringify(last)}`);
  }
}

/** Polls a yes/no condition; returns how long it took (the cluster tests report it). */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 100,
): Promise<number> {
  const started = Date.now();
  await eventually(async () => ((await check()) ? true : undefined), { timeoutMs, everyMs, what });
  return Date.now() - started;
}
