import { Inject, Injectable } from '@nestjs/common';
import { and, asc, between, eq } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { attachmentBlobChunks } from '../database/schema';
import type { BlobContent } from './blob-content';

/** Chunks read per query while streaming a download: about 1 MB in memory at a time. */
const CHUNKS_PER_READ = 4;

/** PGlite answers bytea as a Uint8Array, node-postgres as a Buffer: both as a Buffer, without a copy. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The default store: a blob's content as rows of attachment_blob_chunks, one statement per write or read. */
@Injectable()
export class DatabaseBlobContent implements BlobContent {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async append(blobId: string, seq: number, bytes: Buffer): Promise<void> {
    await this.db.insert(attachmentBlobChunks).values({ blobId, seq, data: bytes });
  }

  async *read(blob: { id: string; chunkSize: number }, start: number, end: number): AsyncIterable<Buffer> {
    const first = Math.floor(start / blob.chunkSize);
    const last = Math.floor(end / blob.chunkSize);
    for (let from = first; from <= last; from += CHUNKS_PER_READ) {
      const rows = await this.db
        .select({ seq: attachmentBlobChunks.seq, data: attachmentBlobChunks.data })
        .from(attachmentBlobChunks)
        .where(
          and(
            eq(attachmentBlobChunks.blobId, blob.id),
            between(attachmentBlobChunks.seq, from, Math.min(from + CHUNKS_PER_READ - 1, last)),
          ),
        )
        .orderBy(asc(attachmentBlobChunks.seq));
      if (rows.length === 0) throw new Error(`blob ${blob.id} has no chunk ${from}: it was removed`);
      for (const row of rows) {
        const offset = row.seq * blob.chunkSize;
        const bytes = asBuffer(row.data);
        // Only the requested part of the first and last chunk.
        yield bytes.subarray(Math.max(0, start - offset), Math.min(bytes.length, end - offset + 1));
      }
    }
  }

  /** Nothing to do: the chunks go with their blob row (on delete cascade). */
  async remove(): Promise<void> {}
}
