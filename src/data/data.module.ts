import { IdempotencyModule } from '../idempotency/idempotency.module';
import { Module } from '@nestjs/common';
import { PermissionsModule } from '../permissions/permissions.module';
import { ValidationModule } from '../validation/validation.module';
import { GridQueryService } from './grid/grid-query.service';
import { RecordCsvRepository } from './record-csv.repository';
import { RecordCursorRepository } from './record-cursor.repository';
import { RecordListService } from './record-list.service';
import { RecordStatsRepository } from './record-stats.repository';
import { RecordsController } from './records.controller';
import { RecordsRepository } from './records.repository';
import { RecordsService } from './records.service';
import { VisibleRecords } from './visible-records.service';

/**
 * Records. Other modules use `RecordsService` (the route operations, each checking its own form
 * permission) and `VisibleRecords` (access-checked selections read in batches or counted); the
 * workflow module runs `appendToWorkflowLog` (record-workflow-log.ts) inside the statement that
 * ends a run.
 */
@Module({
  imports: [IdempotencyModule, PermissionsModule, ValidationModule],
  controllers: [RecordsController],
  providers: [
    RecordsService,
    RecordsRepository,
    RecordListService,
    GridQueryService,
    RecordCursorRepository,
    RecordCsvRepository,
    RecordStatsRepository,
    VisibleRecords,
  ],
  exports: [RecordsService, VisibleRecords],
})
export class DataModule {}
