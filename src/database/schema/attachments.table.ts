import { sql } from 'drizzle-orm';
import {
  bigint,
  customType,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt, primaryId } from './columns';
import { dataRecords } from './data-records.table';

const bytea = customType<{ data: Buffer }>({ dataType: () => 'bytea' });

/**
 * Files of submissions (README "Attachments"), owned by the attachments module. A blob is the
 * content, stored once per SHA-256 in chunks; `sha256` is null while an upload is being written
 * (its hash is known only at the end), and such a blob is removed when the upload fails.
 */
export const attachmentBlobs = pgTable(
  'attachment_blobs',
  {
    id: primaryId(),
    /** Lower-case hex SHA-256 of the content; null while the upload is still being written. */
    sha256: text('sha256'),
    size: bigint('size', { mode: 'number' }).notNull().default(0),
    /** Bytes of every chunk but the last, so a byte range maps to chunk numbers. */
    chunkSize: integer('chunk_size').notNull(),
    createdAt: createdAt(),
  },
  (table) => [
    uniqueIndex('attachment_blobs_sha256_key').on(table.sha256),
    // The cleanup finds uploads that never finished.
    index('attachment_blobs_unfinished_idx')
      .on(table.createdAt)
      .where(sql`${table.sha256} is null`),
  ],
);

/** A blob's content in order, one row per chunk of `chunk_size` bytes, written and read a few at a time. */
export const attachmentBlobChunks = pgTable(
  'attachment_blob_chunks',
  {
    blobId: uuid('blob_id')
      .notNull()
      .references(() => attachmentBlobs.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    data: bytea('data').notNull(),
  },
  (table) => [primaryKey({ columns: [table.blobId, table.seq] })],
);

/**
 * One upload: who sent it for which form, field and site, under which name, and the record it is
 * linked to (null until a record's field names it, and again after the record drops it). Purging
 * the record removes its attachments (cascade); the cleanup then removes blobs nothing refers to.
 */
export const attachments = pgTable(
  'attachments',
  {
    id: primaryId(),
    blobId: uuid('blob_id')
      .notNull()
      .references(() => attachmentBlobs.id),
    configId: uuid('config_id').notNull(),
    /** The attachment field of the form it was uploaded for. */
    field: text('field').notNull(),
    siteId: uuid('site_id'),
    uploadedBy: uuid('uploaded_by'),
    /** The name the client gave, reduced to a base name; only ever shown, never used as a path. */
    filename: text('filename').notNull(),
    /** Sniffed from the content, never taken from the client. */
    mediaType: text('media_type').notNull(),
    size: bigint('size', { mode: 'number' }).notNull(),
    sha256: text('sha256').notNull(),
    recordId: uuid('record_id').references(() => dataRecords.id, { onDelete: 'cascade' }),
    /** Since when it has been without a record (upload, or the record dropped it): the cleanup's clock. */
    unlinkedSince: timestamp('unlinked_since', { withTimezone: true, mode: 'date' }).defaultNow(),
    createdAt: createdAt(),
  },
  (table) => [
    index('attachments_record_idx').on(table.recordId),
    index('attachments_blob_idx').on(table.blobId),
    index('attachments_uploader_idx').on(table.uploadedBy, table.createdAt),
    index('attachments_unlinked_idx')
      .on(table.unlinkedSince)
      .where(sql`${table.recordId} is null`),
  ],
);
