import { Module } from '@nestjs/common';
import { IdempotencyRepository } from './idempotency.repository';
import { IdempotencyRetention } from './idempotency-retention';
import { IdempotencyService } from './idempotency.service';
import { IdempotentRequests } from './idempotent-requests';

/** `Idempotency-Key` for the routes that create: record creation and workflow execution. */
@Module({
  providers: [IdempotencyRepository, IdempotencyService, IdempotentRequests, IdempotencyRetention],
  exports: [IdempotencyService, IdempotentRequests],
})
export class IdempotencyModule {}
