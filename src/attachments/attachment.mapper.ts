import type { AttachmentRow } from './attachments.repository';
import type { RecordAttachmentDto, UploadedAttachmentDto } from './dto/attachment.dto';

export function toUploadedAttachment(row: AttachmentRow): UploadedAttachmentDto {
  return {
    attachmentId: row.id,
    field: row.field,
    filename: row.filename,
    mediaType: row.mediaType,
    size: row.size,
    sha256: row.sha256,
  };
}

/** The download route of a record's attachment. */
export function attachmentUrl(configId: string, recordId: string, attachmentId: string): string {
  return `/api/data/${configId}/${recordId}/attachments/${attachmentId}`;
}

export function toRecordAttachment(row: AttachmentRow & { recordId: string }): RecordAttachmentDto {
  return { ...toUploadedAttachment(row), url: attachmentUrl(row.configId, row.recordId, row.id) };
}
