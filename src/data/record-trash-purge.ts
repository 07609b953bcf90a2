import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { RecordsRepository } from './records.repository';

const PURGE_EVERY_MS = 60 * 60_000;

/**
 * Purges records that have been in the trash for RECORD_TRASH_DAYS, hourly (and at start), as the
 * idempotency and run retentions do; their history entries stay. Every instance runs it: the purge
 * skips rows another one is purging, and a second run finds nothing left to do.
 */
@Injectable()
export class RecordTrashPurge implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RecordTrashPurge.name);
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly records: RecordsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.purge(), PURGE_EVERY_MS);
    this.timer.unref();
    void this.purge();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Purges what went to the trash before `cutoff` (default: RECORD_TRASH_DAYS ago); how many went. */
  async purge(cutoff = new Date(Date.now() - this.config.recordTrashDays * 86_400_000)): Promise<number> {
    try {
      const purged = await this.records.purgeDeletedBefore(cutoff);
      if (purged > 0) this.logger.log(`purged ${purged} records from the trash`);
      return purged;
    } catch (error) {
      this.logger.warn(`trash purge failed: ${String(error)}`);
      return 0;
    }
  }
}
