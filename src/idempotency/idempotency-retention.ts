import { Injectable } from '@nestjs/common';
import { HourlyPurge } from '../common/lifecycle/hourly-purge';
import { IdempotencyService } from './idempotency.service';

/** Deletes expired `Idempotency-Key` rows hourly (and at start), as run retention does for runs. */
@Injectable()
export class IdempotencyRetention extends HourlyPurge {
  constructor(private readonly idempotency: IdempotencyService) {
    super('expired idempotency keys');
  }

  purge(): Promise<number> {
    return this.counted(() => this.idempotency.purgeExpired());
  }
}
