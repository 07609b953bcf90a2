import { AsyncLocalStorage } from 'node:async_hooks';
import type { SQL } from 'drizzle-orm';

/**
 * A write one module offers to the next insert another module makes in the same async context, so
 * the two commit in one statement (a data-modifying CTE) or one transaction: one commit and one
 * round trip instead of two. Each module still writes only its own tables: the offering repository
 * builds the statement, the carrying one includes it without reading it.
 *
 * The offering side learns afterwards whether the write was taken; taken and the carrying
 * operation answered means it committed. Taken and failed is unknown (the commit may have happened
 * and its answer been lost): the offering side must write it again in a way that tolerates finding
 * it stored. Not taken: nothing was written.
 */
export class CarriedWrite {
  private state: 'offered' | 'taken' | 'closed' = 'offered';

  constructor(private readonly statement: SQL) {}

  get taken(): boolean {
    return this.state === 'taken';
  }

  /** The statement to include, once; null after it was taken or the offer was closed. */
  take(): SQL | null {
    if (this.state !== 'offered') return null;
    this.state = 'taken';
    return this.statement;
  }

  /** Ends the offer: work still running after it (an abandoned attempt) no longer takes it. */
  close(): void {
    if (this.state === 'offered') this.state = 'closed';
  }
}

const offered = new AsyncLocalStorage<CarriedWrite>();

/** Runs `work` with `write` offered to the first insert that takes it; the offer ends with `work`. */
export async function offeringWrite<T>(write: CarriedWrite, work: () => Promise<T>): Promise<T> {
  try {
    return await offered.run(write, work);
  } finally {
    write.close();
  }
}

/**
 * The write offered in this async context, if any, marked taken: the caller must put it into the
 * statement (or transaction) it sends next, so it commits with it.
 */
export function takeCarriedWrite(): SQL | null {
  return offered.getStore()?.take() ?? null;
}
