import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { IdempotencyService } from './idempotency.service';

const PURGE_EVERY_MS = 60 * 60_000;

/** Deletes expired `Idempotency-Key` rows hourly (and at start), as run retention does for runs. */
@Injectable()
export class IdempotencyRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(IdempotencyRetention.name);
  private timer?: NodeJS.Timeout;

  constructor(private readonly idempotency: IdempotencyService) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.purge(), PURGE_EVERY_MS);
    this.timer.unref();
    void this.purge();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async purge(): Promise<number> {
    try {
      const removed = await this.idempotency.purgeExpired();
      if (removed > 0) this.logger.log(`purged ${removed} expired idempotency keys`);
      return removed;
    } catch (error) {
      this.logger.warn(`idempotency key purge failed: ${String(error)}`);
      return 0;
    }
  }
}
