import { isDatabaseUnavailable } from '../../../common/errors/database-unavailable';

const FIRST_WAIT_MS = 100;
export const LONGEST_WAIT_MS = 2000;

/**
 * Runs one write of a run again while the database is unreachable (connection refused or reset,
 * admin shutdown 57P01, class 08), waiting 100 ms, 200 ms, ... up to 2 s between tries, for at most
 * `budgetMs`; any other error, or the last one, is thrown. `attempt` is 1 for the first try, so a
 * write can tell that an earlier try may have been committed before its connection broke.
 */
export async function retryWhileUnavailable<T>(
  budgetMs: number,
  write: (attempt: number) => Promise<T>,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<T> {
  const giveUpAt = Date.now() + budgetMs;
  let wait = FIRST_WAIT_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await write(attempt);
    } catch (error) {
      if (!isDatabaseUnavailable(error) || Date.now() + wait > giveUpAt) throw error;
      await sleep(wait);
      wait = Math.min(wait * 2, LONGEST_WAIT_MS);
    }
  }
}
