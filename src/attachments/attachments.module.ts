import { Module } from '@nestjs/common';
import { PermissionsModule } from '../permissions/permissions.module';
import { AttachmentCleanup } from './attachment-cleanup';
import { AttachmentUploadsService } from './attachment-uploads.service';
import { AttachmentsController } from './attachments.controller';
import { AttachmentsRepository } from './attachments.repository';
import { AttachmentsService } from './attachments.service';
import { BLOB_CONTENT } from './blob-content';
import { DatabaseBlobContent } from './database-blob-content';
import { RecordEventAttachments } from './record-event-attachments';

/**
 * Files of submissions (README "Attachments"): uploads streamed into content-addressed blobs
 * (tables attachment_blobs, attachment_blob_chunks, attachments), linked to records by the records
 * module through `AttachmentsService`, which also streams them back; AttachmentCleanup removes
 * what nothing refers to. The bytes live behind BLOB_CONTENT (the database by default).
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
    { provide: BLOB_CONTENT, useClass: DatabaseBlobContent },
  ],
  exports: [AttachmentsService, AttachmentUploadsService, RecordEventAttachments],
})
export class AttachmentsModule {}
