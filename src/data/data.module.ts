import { IdempotencyModule } from '../idempotency/idempotency.module';
import { Module } from '@nestjs/common';
import { AttachmentsModule } from '../attachments/attachments.module';
import { ConditionalRequests } from '../common/http/conditional-requests';
import { PermissionsModule } from '../permissions/permissions.module';
import { ValidationModule } from '../validation/validation.module';
import { GridQueryService } from './grid/grid-query.service';
import { RecordHistoryController } from './history/record-history.controller';
import { RecordHistoryRepository } from './history/record-history.repository';
import { RecordHistoryService } from './history/record-history.service';
import { RecordBulkRepository } from './record-bulk.repository';
import { RecordAttachmentsController } from './record-attachments.controller';
import { RecordAttachments } from './record-attachments.service';
import { RecordWithFiles } from './record-with-files.service';
import { RecordCsvRepository } from './record-csv.repository';
import { RecordImports } from './record-imports.service';
import { RecordErasure } from './record-erasure.service';
import { RecordCursorRepository } from './record-cursor.repository';
import { RecordListService } from './record-list.service';
import { RecordStatsRepository } from './record-stats.repository';
import { RecordTrashPurge } from './record-trash-purge';
import { RecordDraftRetention } from './record-draft-retention';
import { RecordDraftsRepository } from './record-drafts.repository';
import { RecordDraftsService } from './record-drafts.service';
import { RecordDraftsController } from './record-drafts.controller';
import { GridStoreController } from './grid/grid-store.controller';
import { RecordsController } from './records.controller';
import { RecordsRepository } from './records.repository';
import { RecordsService } from './records.service';
import { VisibleRecords } from './visible-records.service';

/**
 * Records. Other modules use `RecordsService` (the route operations, each checking its own form
 * permission) and `VisibleRecords` (access-checked selections read in batches or counted); a
 * run's entry in a record's workflow log is written by the run's end in SQL (migration 0024's
 * `fdws_run_ended`). Records deleted go to a trash (purged after RECORD_TRASH_DAYS by RecordTrashPurge);
 * drafts (RecordDraftsService) go there after DRAFT_RETENTION_DAYS untouched (RecordDraftRetention);
 * every change appends to the records' history (`history/`, table record_history) in the
 * statement that makes it. Attachment fields are linked through AttachmentsService in each write's
 * transaction; RecordAttachmentsController streams a record's files. `RecordErasure` serves the
 * erasure module (README "Erasure"), `RecordImports` the imports module (README "Bulk import").
 */
@Module({
  imports: [IdempotencyModule, PermissionsModule, ValidationModule, AttachmentsModule],
  controllers: [
    RecordsController,
    GridStoreController,
    RecordDraftsController,
    RecordHistoryController,
    RecordAttachmentsController,
  ],
  providers: [
    RecordsService,
    RecordsRepository,
    RecordListService,
    GridQueryService,
    RecordCursorRepository,
    RecordCsvRepository,
    RecordStatsRepository,
    VisibleRecords,
    RecordHistoryService,
    RecordHistoryRepository,
    RecordTrashPurge,
    RecordDraftsService,
    RecordDraftsRepository,
    RecordDraftRetention,
    RecordErasure,
    RecordImports,
    RecordBulkRepository,
    RecordAttachments,
    RecordWithFiles,
    ConditionalRequests,
  ],
  exports: [RecordsService, VisibleRecords, RecordErasure, RecordImports, RecordAttachments],
})
export class DataModule {}
