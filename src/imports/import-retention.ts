import { Inject, Injectable } from '@nestjs/common';
import { HourlyPurge } from '../common/lifecycle/hourly-purge';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { ImportUpkeepRepository } from './import-upkeep.repository';

/**
 * Deletes finished imports (with their refusals) IMPORT_RETENTION_DAYS after they finished; the
 * records they stored stay. Unfinished ones (receiving, storing) are never purged.
 */
@Injectable()
export class ImportRetention extends HourlyPurge {
  constructor(
    private readonly imports: ImportUpkeepRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super('imports past their retention');
  }

  purge(cutoff = new Date(Date.now() - this.config.importRetentionDays * 86_400_000)): Promise<number> {
    return this.counted(() => this.imports.purgeFinishedBefore(cutoff));
  }
}
