import { Inject, Injectable } from '@nestjs/common';
import { HourlyPurge } from '../common/lifecycle/hourly-purge';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { RecordsRepository } from './records.repository';

/**
 * Purges records that have been in the trash for RECORD_TRASH_DAYS, hourly (and at start); their
 * history entries stay. Every instance runs it: the purge skips rows another one is purging, and a
 * second run finds nothing left to do.
 */
@Injectable()
export class RecordTrashPurge extends HourlyPurge {
  constructor(
    private readonly records: RecordsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super('records from the trash');
  }

  /** Purges what went to the trash before `cutoff` (default: RECORD_TRASH_DAYS ago); how many went. */
  purge(cutoff = new Date(Date.now() - this.config.recordTrashDays * 86_400_000)): Promise<number> {
    return this.counted(() => this.records.purgeDeletedBefore(cutoff));
  }
}
