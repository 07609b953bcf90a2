import { Inject, Injectable } from '@nestjs/common';
import { and, eq, gt, sql } from 'drizzle-orm';
import { isUuid } from '../common/validation/is-uuid';
import { DATABASE, type Database } from '../database/database.types';
import { rowsOf } from '../database/raw-rows';
import { attachmentBlobs, attachments } from '../database/schema';

export type AttachmentRow = typeof attachments.$inferSelect;
export type NewAttachment = Omit<
  typeof attachments.$inferInsert,
  'id' | 'blobId' | 'recordId' | 'unlinkedSince' | 'createdAt'
>;
type Executor = Pick<Database, 'execute' | 'select' | 'update'>;

/** Serializes, for the rest of the transaction, the decisions about one key (a hash, a user's quota). */
async function lock(tx: Pick<Database, 'execute'>, key: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`);
}

/**
 * The attachments module's tables: blobs (content-addressed, their bytes in BlobContent) and the
 * attachments (uploads) referring to them, linked to at most one record each.
 */
@Injectable()
export class AttachmentsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** A blob to write an upload into; unfinished (no hash) until finishUpload. */
  async createPendingBlob(chunkSize: number): Promise<string> {
    const [row] = await this.db
      .insert(attachmentBlobs)
      .values({ chunkSize })
      .returning({ id: attachmentBlobs.id });
    return row.id;
  }

  /**
   * Removes an unfinished blob (and, by cascade, its chunks in the database store): an upload that
   * failed, was refused or duplicated a stored blob.
   */
  async deletePendingBlob(blobId: string): Promise<void> {
    await this.db
      .delete(attachmentBlobs)
      .where(and(eq(attachmentBlobs.id, blobId), sql`${attachmentBlobs.sha256} is null`));
  }

  /**
   * Finishes an upload in one transaction: when a blob with the same hash exists, the new one is
   * dropped and the attachment refers to the stored one (deduplication), else the new blob gets
   * its hash; under the uploader's lock, the upload is refused (`limited`) when the uploader already
   * made `perMinute` uploads in the last minute. Blobs of one hash are decided one at a time, and
   * the stored blob is held (key share) so the cleanup cannot remove it before the attachment refers to it.
   */
  async finishUpload(
    pendingBlobId: string,
    blob: { sha256: string; size: number },
    attachment: NewAttachment,
    perMinute: number,
  ): Promise<{ attachment: AttachmentRow; deduplicated: boolean } | { limited: true }> {
    const outcome = await this.db.transaction(async (tx) => {
      if (attachment.uploadedBy) {
        await lock(tx, `attachments:uploads:${attachment.uploadedBy}`);
        if ((await this.recentUploads(attachment.uploadedBy, tx)) >= perMinute)
          return { limited: true as const };
      }
      await lock(tx, `attachments:blob:${blob.sha256}`);
      const [stored] = rowsOf(
        await tx.execute(sql`select id from attachment_blobs where sha256 = ${blob.sha256} for key share`),
      ) as { id: string }[];
      let blobId = pendingBlobId;
      if (stored) blobId = stored.id;
      else
        await tx
          .update(attachmentBlobs)
          .set({ sha256: blob.sha256, size: blob.size })
          .where(eq(attachmentBlobs.id, pendingBlobId));
      const [row] = await tx
        .insert(attachments)
        .values({ ...attachment, blobId })
        .returning();
      return { attachment: row, deduplicated: Boolean(stored) };
    });
    // A duplicate's pending blob is left to the caller, which removes it with its bytes after the
    // commit (a delete of its chunks is the slow part).
    return outcome;
  }

  /** Which of these blob ids still have a row (finished or not). */
  async existingBlobIds(ids: string[]): Promise<Set<string>> {
    const valid = ids.filter(isUuid);
    if (valid.length === 0) return new Set();
    const rows = await this.db
      .select({ id: attachmentBlobs.id })
      .from(attachmentBlobs)
      .where(sql`${attachmentBlobs.id} = any(${sql.param(valid)}::uuid[])`);
    return new Set(rows.map((row) => row.id));
  }

  /** How many uploads the user made in the last minute. */
  async recentUploads(userId: string, db: Pick<Database, 'select'> = this.db): Promise<number> {
    const [{ n }] = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(attachments)
      .where(
        and(eq(attachments.uploadedBy, userId), gt(attachments.createdAt, sql`now() - interval '1 minute'`)),
      );
    return n;
  }

  /** The attachments with these ids, locked for the rest of the caller's transaction. */
  async lockByIds(tx: Executor, ids: string[]): Promise<AttachmentRow[]> {
    const valid = ids.filter(isUuid);
    if (valid.length === 0) return [];
    return tx
      .select()
      .from(attachments)
      .where(sql`${attachments.id} = any(${sql.param(valid)}::uuid[])`)
      .for('update');
  }

  /** The attachments with these ids that are still stored. */
  async findByIds(ids: string[]): Promise<AttachmentRow[]> {
    const valid = ids.filter(isUuid);
    if (valid.length === 0) return [];
    return this.db
      .select()
      .from(attachments)
      .where(sql`${attachments.id} = any(${sql.param(valid)}::uuid[])`);
  }

  /** The attachments a record refers to now, in upload order. */
  listByRecord(recordId: string, db: Pick<Database, 'select'> = this.db): Promise<AttachmentRow[]> {
    return db
      .select()
      .from(attachments)
      .where(eq(attachments.recordId, recordId))
      .orderBy(attachments.createdAt, attachments.id);
  }

  /** The attachments of these records, in upload order, with their blobs' chunk size (an export's batch). */
  async listByRecords(recordIds: string[]): Promise<(AttachmentRow & { chunkSize: number })[]> {
    if (recordIds.length === 0) return [];
    const rows = await this.db
      .select({ attachment: attachments, chunkSize: attachmentBlobs.chunkSize })
      .from(attachments)
      .innerJoin(attachmentBlobs, eq(attachmentBlobs.id, attachments.blobId))
      .where(sql`${attachments.recordId} = any(${sql.param(recordIds)}::uuid[])`)
      .orderBy(attachments.createdAt, attachments.id);
    return rows.map((row) => ({ ...row.attachment, chunkSize: row.chunkSize }));
  }

  /**
   * Makes `ids` the record's attachments in the caller's transaction: links the new ones, and
   * releases the ones it no longer names (they are kept for ATTACHMENT_UNLINKED_HOURS, then cleaned).
   */
  async relink(tx: Executor, recordId: string, ids: string[]): Promise<void> {
    await tx.execute(sql`update attachments set record_id = null, unlinked_since = now()
      where record_id = ${recordId}::uuid and not (id = any(${sql.param(ids)}::uuid[]))`);
    if (ids.length > 0)
      await tx.execute(sql`update attachments set record_id = ${recordId}::uuid, unlinked_since = null
        where id = any(${sql.param(ids)}::uuid[]) and record_id is null`);
  }

  /** One attachment of a record, with the blob it reads from. */
  async findOfRecord(
    recordId: string,
    attachmentId: string,
  ): Promise<{ attachment: AttachmentRow; chunkSize: number } | null> {
    if (!isUuid(attachmentId)) return null;
    const [row] = await this.db
      .select({ attachment: attachments, chunkSize: attachmentBlobs.chunkSize })
      .from(attachments)
      .innerJoin(attachmentBlobs, eq(attachmentBlobs.id, attachments.blobId))
      .where(and(eq(attachments.id, attachmentId), eq(attachments.recordId, recordId)))
      .limit(1);
    return row ?? null;
  }

  /**
   * Removes uploads of a refused request at once (those not linked to a record meanwhile), then
   * their blobs when nothing else refers to them; a blob a concurrent upload is taking (locked) is
   * left to the cleanup. The ids of the blobs removed.
   */
  async deleteUploads(ids: string[]): Promise<string[]> {
    const valid = ids.filter(isUuid);
    if (valid.length === 0) return [];
    const released = rowsOf(
      await this.db.execute(sql`delete from attachments
        where id = any(${sql.param(valid)}::uuid[]) and record_id is null returning blob_id`),
    ) as { blob_id: string }[];
    const blobIds = [...new Set(released.map((row) => row.blob_id))];
    if (blobIds.length === 0) return [];
    const unreferenced = sql`not exists (select 1 from attachments a where a.blob_id = attachment_blobs.id)`;
    const blobs = rowsOf(
      await this.db.execute(sql`delete from attachment_blobs where id in (
          select id from attachment_blobs where id = any(${sql.param(blobIds)}::uuid[]) and ${unreferenced}
          for update skip locked)
        and ${unreferenced} returning id`),
    ) as { id: string }[];
    return blobs.map((blob) => blob.id);
  }

  /**
   * The cleanup: attachments without a record since before `cutoff`, unfinished uploads started
   * before it, then blobs nothing refers to any more (the last record referring to them was purged).
   * Rows are taken with SKIP LOCKED and re-checked, so instances cleaning at once, an upload reusing
   * a blob or a record linking an upload at that moment are never in conflict. How many of each went.
   */
  async deleteUnreferenced(cutoff: Date): Promise<{ attachments: number; blobs: number; blobIds: string[] }> {
    const at = cutoff.toISOString();
    const released = rowsOf(
      await this.db.execute(sql`delete from attachments where id in (
          select id from attachments where record_id is null and unlinked_since < ${at}::timestamptz
          for update skip locked)
        and record_id is null returning id`),
    );
    const blobs = rowsOf(
      await this.db.execute(sql`delete from attachment_blobs where id in (
          select b.id from attachment_blobs b
          where (b.sha256 is null and b.created_at < ${at}::timestamptz)
             or (b.sha256 is not null and not exists (select 1 from attachments a where a.blob_id = b.id))
          for update skip locked)
        and (sha256 is null or not exists (select 1 from attachments a where a.blob_id = attachment_blobs.id))
        returning id`),
    ) as { id: string }[];
    return { attachments: released.length, blobs: blobs.length, blobIds: blobs.map((b) => b.id) };
  }
}
