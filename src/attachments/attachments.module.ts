import { resolve } from 'node:path';
import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DatabaseClient } from '../database/database-client';
import { PermissionsModule } from '../permissions/permissions.module';
import { AttachmentCleanup } from './attachment-cleanup';
import { AttachmentUploadsService } from './attachment-uploads.service';
import { AttachmentsController } from './attachments.controller';
import { AttachmentsRepository } from './attachments.repository';
import { AttachmentsService } from './attachments.service';
import { BLOB_CONTENT } from './blob-content';
import { DatabaseBlobContent } from './database-blob-content';
import { FilesystemBlobContent } from './filesystem-blob-content';
import { RecordEventAttachments } from './record-event-attachments';

/**
 * Files of submissions (README "Attachments"): uploads streamed into content-addressed blobs
 * (tables attachment_blobs, attachment_blob_chunks, attachments), linked to records by the records
 * module through `AttachmentsService`, which also streams them back; AttachmentCleanup removes
 * what nothing refers to. The bytes live behind BLOB_CONTENT (ATTACHMENT_STORE).
 */
@Module({
  imports: [PermissionsModule],
  controllers: [AttachmentsController],
  providers: [
    AttachmentsRepository,
    AttachmentsService,
    AttachmentUploadsService,
    AttachmentCleanup,
    RecordEventAttachments,
    DatabaseBlobContent,
    {
      provide: BLOB_CONTENT,
      inject: [APP_CONFIG, DatabaseClient, DatabaseBlobContent],
      useFactory: (config: AppConfig, client: DatabaseClient, database: DatabaseBlobContent) =>
        storeOf(config, client) === 'filesystem'
          ? FilesystemBlobContent.open(resolve(config.attachmentDir))
          : database,
    },
  ],
  exports: [AttachmentsService, AttachmentUploadsService, RecordEventAttachments],
})
export class AttachmentsModule {}

/**
 * `auto`: files beside an embedded database, which runs in this process (every piece it stores or
 * reads crosses its WebAssembly memory; bench/README "Attachments"), and in the database on a
 * PostgreSQL server, which every instance shares.
 */
function storeOf(config: AppConfig, client: DatabaseClient): 'database' | 'filesystem' {
  if (config.attachmentStore !== 'auto') return config.attachmentStore;
  return client.driver === 'pglite' ? 'filesystem' : 'database';
}
