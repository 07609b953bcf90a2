/**
 * Reads `probe` every `everyMs` (50) until `done` accepts its value, and returns that value; fails
 * after `timeoutMs` naming `what` and the last value read.
 */
export async function until<T>(
  probe: () => Promise<T> | T,
  done: (value: T) => boolean,
  what: string,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Waits until `condition` holds, checked every `everyMs` (50); fails after `timeoutMs` naming `what`. */
export async function untilTrue(
  condition: () => boolean | Promise<boolean>,
  what: string,
  { timeoutMs = 20_000, everyMs = 50 } = {},
): Promise<void> {
  await until(condition, (held) => held, what, timeoutMs, everyMs);
}
