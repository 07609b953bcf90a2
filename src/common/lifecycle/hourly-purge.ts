import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { causeChain } from '../errors/cause-chain';

const PURGE_EVERY_MS = 60 * 60_000;

/**
 * A retention job: `purge` runs at start and hourly on every instance (each purge must be safe to
 * run twice at once); a purge that removed something is one log line, a failed one a warning.
 */
export abstract class HourlyPurge implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(this.constructor.name);
  private timer?: NodeJS.Timeout;

  /** `what` names the rows in the log line: `purged 3 <what>`. */
  protected constructor(private readonly what: string) {}

  /** Removes what is due; how many went (0 when it failed). */
  abstract purge(): Promise<number>;

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.purge(), PURGE_EVERY_MS);
    this.timer.unref();
    void this.purge();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  protected async counted(remove: () => Promise<number>): Promise<number> {
    try {
      const removed = await remove();
      if (removed > 0) this.logger.log(`purged ${removed} ${this.what}`);
      return removed;
    } catch (error) {
      this.logger.warn(`purging ${this.what} failed: ${causeChain(error)}`);
      return 0;
    }
  }
}
