import { Module } from '@nestjs/common';
import { DataModule } from '../data/data.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { ImportsModule } from '../imports/imports.module';
import { PermissionsModule } from '../permissions/permissions.module';
import { UsersModule } from '../users/users.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { WorkflowModule } from '../workflow/workflow.module';
import { ErasureController } from './erasure.controller';
import { ErasureProcessor } from './erasure.processor';
import { ErasureService } from './erasure.service';
import { ErasuresRepository } from './erasures.repository';

/**
 * Erasure of a person's data (README "Erasure"): the operation and audit entry (table `erasures`),
 * worked through by calling each feature's own erase methods (records and history, events,
 * webhooks, workflow runs and their mail, idempotent answers, the importer kept by imports, the
 * account).
 */
@Module({
  imports: [
    DataModule,
    IdempotencyModule,
    ImportsModule,
    PermissionsModule,
    UsersModule,
    WebhooksModule,
    WorkflowModule,
  ],
  controllers: [ErasureController],
  providers: [ErasuresRepository, ErasureService, ErasureProcessor],
})
export class ErasureModule {}
