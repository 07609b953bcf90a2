import { Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { create as contentDisposition } from 'content-disposition';
import { requireUser, type RequestContext } from '../common/context/request-context';
import { AppError, type FieldError } from '../common/errors/app-error';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { Database } from '../database/database.types';
import type { ConfigRow } from '../form-configs/form-configs.repository';
import { attachmentFieldsOf, mediaTypeAllowed, type AttachmentField } from '../validation/attachment-fields';
import { toRecordAttachment } from './attachment.mapper';
import { AttachmentsRepository, type AttachmentRow } from './attachments.repository';
import { BLOB_CONTENT, type BlobContent } from './blob-content';
import { parseRange } from './byte-range';
import type { RecordAttachmentDto } from './dto/attachment.dto';

/** The record a write leaves, as the linker sees it inside the write's transaction. */
export interface LinkedRecord {
  id: string;
  siteId: string | null;
  data: Record<string, unknown>;
}

/** Links a record's attachment fields in the transaction of the record's write (see linkerFor). */
export type AttachmentLinker = (
  tx: Pick<Database, 'execute' | 'select' | 'update'>,
  record: LinkedRecord,
) => Promise<void>;

/** A download: the status, the headers and the bytes, streamed. */
export interface AttachmentDownload {
  status: 200 | 206;
  headers: Record<string, string>;
  body: Readable;
}

/**
 * What other modules use of attachments: the records module links a record's attachment fields
 * in its writes (linkerFor), shows a record's attachments, and streams one to whoever may read
 * the record (open; the record's access is the records module's check, made before).
 */
@Injectable()
export class AttachmentsService {
  constructor(
    private readonly repository: AttachmentsRepository,
    @Inject(BLOB_CONTENT) private readonly content: BlobContent,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The linker of a write of `config`'s records, null for a form without attachment fields. In the
   * record's transaction, every id in its attachment fields must be an upload of this form, field
   * and site, by the caller (or any upload when the caller is an admin) or already this record's,
   * not another record's, and fit the field and the per-record limits; then the record's links
   * become exactly those ids (the ones it dropped are released). Otherwise 400
   * ATTACHMENT_NOT_LINKABLE naming each field, and the write is rolled back.
   */
  linkerFor(ctx: RequestContext, config: ConfigRow): AttachmentLinker | null {
    const fields = attachmentFieldsOf(config.schema);
    if (fields.length === 0) return null;
    const user = requireUser(ctx);
    return async (tx, record) => {
      const wanted = fields.flatMap((field) => idsIn(record.data[field.name]).map((id) => ({ field, id })));
      const ids = [...new Set(wanted.map((entry) => entry.id))];
      const rows = new Map((await this.repository.lockByIds(tx, ids)).map((row) => [row.id, row]));
      const problems: FieldError[] = [];
      for (const { field, id } of wanted) {
        const problem = this.linkProblem(rows.get(id), field, record, config, user);
        if (problem) problems.push({ field: field.name, rule: 'attachment', message: `${id} ${problem}` });
      }
      if (ids.length > this.config.attachmentMaxFilesPerRecord)
        problems.push(recordProblem(`more than ${this.config.attachmentMaxFilesPerRecord} files`));
      const bytes = [...rows.values()].reduce((sum, row) => sum + row.size, 0);
      if (bytes > this.config.attachmentMaxRecordBytes)
        problems.push(
          recordProblem(`files larger than ${this.config.attachmentMaxRecordBytes} bytes together`),
        );
      if (problems.length > 0) throw new AppError('ATTACHMENT_NOT_LINKABLE', { validationErrors: problems });
      await this.repository.relink(tx, record.id, ids);
    };
  }

  private linkProblem(
    row: AttachmentRow | undefined,
    field: AttachmentField,
    record: LinkedRecord,
    config: ConfigRow,
    user: { userId: string; role: string },
  ): string | null {
    const own = row?.recordId === record.id;
    // Another form's, site's or user's upload is reported as missing: its existence is not revealed.
    if (
      !row ||
      row.configId !== config.id ||
      row.siteId !== record.siteId ||
      (!own && user.role !== 'admin' && row.uploadedBy !== user.userId)
    )
      return 'is not an upload of yours for this form';
    if (row.recordId !== null && !own) return 'belongs to another record';
    if (row.field !== field.name) return `was uploaded for the field "${row.field}"`;
    if (!mediaTypeAllowed(field, row.mediaType)) return `is ${row.mediaType}, which the field does not allow`;
    if (field.maxSize !== null && row.size > field.maxSize) return `is larger than ${field.maxSize} bytes`;
    return null;
  }

  /** The uploads still stored among these ids (a history's files), by id. */
  async describe(ids: string[]): Promise<Map<string, { filename: string; mediaType: string; size: number }>> {
    const rows = await this.repository.findByIds(ids);
    return new Map(
      rows.map((row) => [row.id, { filename: row.filename, mediaType: row.mediaType, size: row.size }]),
    );
  }

  /** A record's attachments with their download URLs; null for a form without attachment fields. */
  async ofRecord(config: ConfigRow, recordId: string): Promise<RecordAttachmentDto[] | null> {
    if (attachmentFieldsOf(config.schema).length === 0) return null;
    const rows = await this.repository.listByRecord(recordId);
    return rows.map((row) => toRecordAttachment({ ...row, recordId }));
  }

  /**
   * For exports (CSV, XLSX): a function replacing, in a batch of records, each attachment field's
   * ids by its files as `name <url>` lines (the download route); null for a form without
   * attachment fields. An id the record does not hold (any more) is left as it is.
   */
  exportCells<T extends { id: string; data: Record<string, unknown> }>(
    config: ConfigRow,
  ): ((rows: T[]) => Promise<T[]>) | null {
    const fields = attachmentFieldsOf(config.schema);
    if (fields.length === 0) return null;
    return async (rows) => {
      const byId = new Map(
        (await this.repository.listByRecords(rows.map((row) => row.id))).map((row) => [row.id, row]),
      );
      const cell = (recordId: string, id: string) => {
        const file = byId.get(id);
        return file?.recordId === recordId
          ? `${file.filename} <${toRecordAttachment({ ...file, recordId }).url}>`
          : id;
      };
      return rows.map((row) => {
        const data = { ...row.data };
        for (const field of fields) {
          const ids = idsIn(data[field.name]);
          if (ids.length > 0) data[field.name] = ids.map((id) => cell(row.id, id)).join('\n');
        }
        return { ...row, data };
      });
    };
  }

  /**
   * The files of these records (a ZIP export's batch): where each goes in the archive
   * (`files/<dataId>/<attachmentId>/<name>`; the name is a base name without control characters,
   * `file` for `.` or `..`, so it cannot leave its folder) and its bytes, read only when consumed.
   */
  async filesOf(recordIds: string[]): Promise<{ path: string; open: () => Readable }[]> {
    const rows = await this.repository.listByRecords(recordIds);
    return rows.map((row) => ({
      path: `files/${row.recordId}/${row.id}/${row.filename}`,
      open: () =>
        Readable.from(this.content.read({ id: row.blobId, chunkSize: row.chunkSize }, 0, row.size - 1), {
          objectMode: false,
        }),
    }));
  }

  /**
   * Streams one attachment of a record (whose readability the caller checked): the whole file, or
   * the one byte range asked for (206; 416 past its end); ETag is the content's SHA-256.
   */
  async open(recordId: string, attachmentId: string, rangeHeader?: string): Promise<AttachmentDownload> {
    const found = await this.repository.findOfRecord(recordId, attachmentId);
    if (!found) throw new AppError('ATTACHMENT_NOT_FOUND');
    const { attachment, chunkSize } = found;
    const size = attachment.size;
    const headers: Record<string, string> = {
      'content-type': attachment.mediaType,
      'content-disposition': contentDisposition(attachment.filename),
      'x-content-type-options': 'nosniff',
      etag: `"${attachment.sha256}"`,
      'accept-ranges': 'bytes',
      // The bytes behind an id never change: a client may keep them, privately.
      'cache-control': 'private, max-age=86400',
    };
    const range = parseRange(rangeHeader, size);
    if (range.kind === 'unsatisfiable')
      throw new AppError('RANGE_NOT_SATISFIABLE', { details: { size, contentRange: `bytes */${size}` } });
    const { start, end } = range.kind === 'partial' ? range.range : { start: 0, end: size - 1 };
    headers['content-length'] = String(end - start + 1);
    if (range.kind === 'partial') headers['content-range'] = `bytes ${start}-${end}/${size}`;
    const body = Readable.from(this.content.read({ id: attachment.blobId, chunkSize }, start, end), {
      objectMode: false,
    });
    return { status: range.kind === 'partial' ? 206 : 200, headers, body };
  }
}

/** The attachment ids a field's value names: one string, or the strings of an array. */
function idsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

function recordProblem(message: string): FieldError {
  return { field: '$record', rule: 'attachmentLimits', message: `the record would refer to ${message}` };
}
