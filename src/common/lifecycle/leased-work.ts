import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { causeChain } from '../errors/cause-chain';
import { settleWithin } from './settle-within';

const SHUTDOWN_WAIT_MS = 10_000;

/**
 * Background work held under a lease in the database (an import, an erasure, a bulk operation):
 * the instance that accepted it starts it at once, and any instance takes over one whose lease
 * expired (its instance died or stopped). The same bookkeeping in each of them, kept here: one loop
 * per piece of work on this instance, a failure is one warning (the work is taken over later), and
 * shutdown waits a while for the work going on (each stops before its next step; its lease then
 * expires and it is taken over).
 */
export abstract class LeasedWork<Row extends { id: string }> implements OnApplicationShutdown {
  protected readonly logger = new Logger(this.constructor.name);
  private readonly inFlight = new Set<Promise<void>>();
  /** The pieces of work this instance is working through now. */
  private readonly processing = new Set<string>();
  private timer?: NodeJS.Timeout;
  private stopped = false;

  /** `what` names the work in the log lines: `<what> <id> stopped: …`, `<what> take-over failed: …`. */
  protected constructor(private readonly what: string) {}

  /** Takes one piece of work whose lease expired, for this instance, or null. */
  protected abstract claimAbandoned(): Promise<Row | null>;

  /** Works through one piece of work this instance holds; returns early once `stopping`. */
  protected abstract process(row: Row): Promise<void>;

  /** True once the application is shutting down. */
  protected get stopping(): boolean {
    return this.stopped;
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await settleWithin(this.inFlight, SHUTDOWN_WAIT_MS);
  }

  /** Resolves when every piece of work this instance is working through now has stopped. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  /** Looks for abandoned work every `ms` (the timer does not hold the process open). */
  protected takeOverEvery(ms: number): void {
    this.timer = setInterval(() => void this.claimAndStart(), ms);
    this.timer.unref();
  }

  /**
   * Works through `row` in the background; resolves when this instance stops working on it (at
   * once when it is working on it already: its lease ran out during one slow step, and the
   * take-over found its own work, which must not get a second loop).
   */
  protected startWork(row: Row): Promise<void> {
    if (this.processing.has(row.id)) return Promise.resolve();
    this.processing.add(row.id);
    const work = this.process(row)
      .catch((error: unknown) =>
        this.logger.warn(`${this.what} ${row.id} stopped: ${causeChain(error)} (taken over later)`),
      )
      .finally(() => {
        this.inFlight.delete(work);
        this.processing.delete(row.id);
      });
    this.inFlight.add(work);
    return work;
  }

  /** Takes over one piece of abandoned work and starts it: the work started, or null when none was. */
  protected async claimAndStart(): Promise<{ work: Promise<void> } | null> {
    if (this.stopped) return null;
    try {
      const row = await this.claimAbandoned();
      return row ? { work: this.startWork(row) } : null;
    } catch (error) {
      this.logger.warn(`${this.what} take-over failed: ${causeChain(error)}`);
      return null;
    }
  }
}
