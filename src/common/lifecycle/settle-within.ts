/**
 * Waits until every one of `work` has settled, or `ms` have passed, whichever comes first: a process
 * shutting down lets its background work finish, but not for ever (the timer does not hold it open).
 */
export async function settleWithin(work: Iterable<Promise<unknown>>, ms: number): Promise<void> {
  await Promise.race([
    Promise.allSettled([...work]),
    new Promise((resolve) => setTimeout(resolve, ms).unref()),
  ]);
}
