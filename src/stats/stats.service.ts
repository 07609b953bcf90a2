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

  /**
   * `today` and `thisWeek` (Monday weeks) in `tz`, or TIMEZONE; over the records the caller may see,
   * of one configuration version with `configVersion`.
   */
  async forConfig(
    ctx: RequestContext,
    configId: string,
    query: { tz?: unknown; configVersion?: unknown; status?: unknown },
  ): Promise<StatsDto> {
    const visible = await this.records.select(ctx, configId, 'viewStats', undefined, query);
    const selection = { ...visible, filters: this.records.versionFilter(query) };
    const tz = typeof query.tz === 'string' ? query.tz : undefined;
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
