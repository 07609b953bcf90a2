import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, isValidTimeZone, type AppConfig } from '../config/app-config';
import type { RequestContext } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import { FormConfigsService } from '../form-configs/form-configs.service';
import { RecordsService } from '../data/records.service';
import { StatsRepository } from './stats.repository';

@Injectable()
export class StatsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly configs: FormConfigsService,
    private readonly records: RecordsService,
    private readonly stats: StatsRepository,
  ) {}

  /** `today` and `thisWeek` (Monday weeks) in `tz`, or TIMEZONE; over the records the caller may see. */
  async forConfig(ctx: RequestContext, configId: string, tz: string | undefined) {
    const timeZone = tz === undefined || tz === '' ? this.config.timezone : tz;
    if (!isValidTimeZone(timeZone) || timeZone.length > 64) {
      throw new AppError('VALIDATION_FAILED', {
        validationErrors: [
          { field: 'tz', rule: 'timeZone', message: 'tz must be an IANA time zone such as Europe/Budapest' },
        ],
      });
    }
    const config = await this.configs.requireVisible(ctx, configId);
    const scope = this.records.scopeOf(ctx, config.id);
    const [counts, byUser] = await Promise.all([
      this.stats.countsSince(scope, timeZone),
      this.stats.countsByUser(scope),
    ]);
    return { ...counts, byUser };
  }
}
