import type { Parametrized } from './built-statement';

/**
 * A write one module hands to an insert of another module, so the two commit in one statement (a
 * data-modifying CTE) or one transaction: one commit and one round trip instead of two. Each module
 * still writes only its own tables: the offering repository builds the statement, the carrying one
 * includes it without reading it. It is passed explicitly (no async-local storage, whose promise
 * hooks would cost every request of the process).
 *
 * The offering side learns afterwards whether the write was taken; taken and the carrying
 * operation answered means it committed. Taken and failed is unknown (the commit may have happened
 * and its answer been lost): the offering side must write it again in a way that tolerates finding
 * it stored. Not taken: nothing was written.
 *
 * The statement returns one row with one column, `answer` (null when the offering side asks for
 * nothing), read in the same statement: the carrying side hands its value back (`answered`).
 */
export class CarriedWrite {
  private state: 'offered' | 'taken' | 'closed' = 'offered';
  private answerValue: unknown = undefined;

  constructor(private readonly statement: Parametrized) {}

  /** The statement's `answer` once the carrying side handed it back; undefined before (or if it could not). */
  get answer(): unknown {
    return this.answerValue;
  }

  /** Called by the carrying side with the `answer` its statement returned. */
  answered(value: unknown): void {
    this.answerValue = value ?? null;
  }

  get taken(): boolean {
    return this.state === 'taken';
  }

  /** The statement to include in the statement (or transaction) sent next, once; null after that or once closed. */
  take(): Parametrized | null {
    if (this.state !== 'offered') return null;
    this.state = 'taken';
    return this.statement;
  }

  /** Ends the offer: work still running after it (an abandoned attempt) no longer takes it. */
  close(): void {
    if (this.state === 'offered') this.state = 'closed';
  }
}
