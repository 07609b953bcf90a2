import { Inject, Injectable } from '@nestjs/common';
import { HourlyPurge } from '../../../common/lifecycle/hourly-purge';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config';
import { RunHistoryRepository } from '../../runs/run-history.repository';

/** Deletes finished run records older than WORKFLOW_RUN_RETENTION_DAYS, hourly (and at start). */
@Injectable()
export class WorkflowRunRetention extends HourlyPurge {
  constructor(
    private readonly runs: RunHistoryRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super('finished workflow runs past their retention');
  }

  purge(): Promise<number> {
    const cutoff = new Date(Date.now() - this.config.workflowRunRetentionDays * 86_400_000);
    return this.counted(() => this.runs.deleteFinishedBefore(cutoff));
  }
}
