import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, isValidTimeZone, type AppConfig } from '../config/app-config';
import type { RequestContext } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import { VisibleRecords } from '../data/visible-records.service';
import type { StatsDto } from './dto/stats.dto';

@Injectable()
export class StatsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly records: VisibleRecords,
  ) {}

  /** `today` and `thisWeek` (Monday weeks) in `tz`, or TIMEZONE; over the records the caller may see. */
  async forConfig(ctx: RequestContext, configId: string, tz: string | undefined): Promise<StatsDto> {
    const selection = await this.records.select(ctx, configId, 'viewStats');
    const timeZone = tz === undefined || tz === '' ? this.config.timezone : tz;
    if (!isValidTimeZone(timeZone) || timeZone.length > 64) {
      throw new AppError('VALIDATION_FAILED', {
        validationErrors: [
          { field: 'tz', rule: 'timeZone', message: 'tz must be an IANA time zone such as Europe/Budapest' },
        ],
      });
    }
    return this.records.counts(selection, timeZone);
  }
}
