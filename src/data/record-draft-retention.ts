import { Inject, Injectable } from '@nestjs/common';
import { HourlyPurge } from '../common/lifecycle/hourly-purge';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { RecordDraftsRepository } from './record-drafts.repository';

/**
 * Moves drafts nobody saved for DRAFT_RETENTION_DAYS to the trash, hourly (and at start): there
 * they stay restorable for RECORD_TRASH_DAYS, then the trash purge removes them. Each move is a
 * `deleted` history entry with the origin `{kind: "retention", days}`. Every instance runs it: the
 * move skips rows another one is moving, and a second run finds nothing left to do.
 */
@Injectable()
export class RecordDraftRetention extends HourlyPurge {
  constructor(
    private readonly drafts: RecordDraftsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super('drafts to the trash');
  }

  /** Moves what was last saved before `cutoff` (default: DRAFT_RETENTION_DAYS ago); how many went. */
  purge(cutoff = new Date(Date.now() - this.config.draftRetentionDays * 86_400_000)): Promise<number> {
    const origin = { kind: 'retention' as const, days: this.config.draftRetentionDays };
    return this.counted(() => this.drafts.trashUntouchedSince(cutoff, { userId: null, origin }));
  }
}
