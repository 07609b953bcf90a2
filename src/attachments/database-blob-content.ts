import { Inject, Injectable } from '@nestjs/common';
import { sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { rowsOf } from '../database/raw-rows';
import type { BlobContent, BlobWriter } from './blob-content';

/**
 * Bytes read per query while streaming a download. Small pieces keep each answer's text and buffer
 * out of V8's large-object space, so they are freed by the cheap young-generation collections (read
 * a whole 256 KB chunk at a time, a 200 MB download raised the resident memory by 68 MB).
 */
const READ_BYTES = 64 * 1024;

/**
 * The default store: a blob's content as rows of attachment_blob_chunks, one statement per write or
 * read. The bytes cross the driver as text the database decodes and encodes (hex in, base64 out):
 * PGlite's own bytea parameters and results are converted byte by byte in JavaScript, 4 to 20 times
 * slower for a 256 KB chunk (bench/README "Attachments"); node-postgres sends bytea as hex text anyway.
 */
@Injectable()
export class DatabaseBlobContent implements BlobContent {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  writer(blobId: string): BlobWriter {
    let seq = 0;
    return {
      write: async (bytes) => {
        await this.db.execute(sql`insert into attachment_blob_chunks (blob_id, seq, data)
          values (${blobId}::uuid, ${seq++}, decode(${bytes.toString('hex')}, 'hex'))`);
      },
      // Each insert is committed (and durable) as it returns.
      finish: async () => undefined,
      close: async () => undefined,
    };
  }

  async *read(blob: { id: string; chunkSize: number }, start: number, end: number): AsyncIterable<Buffer> {
    for (let at = start; at <= end;) {
      const seq = Math.floor(at / blob.chunkSize);
      const offset = at - seq * blob.chunkSize;
      const length = Math.min(READ_BYTES, blob.chunkSize - offset, end - at + 1);
      // substring of an uncompressed (storage external) value reads only the slices it needs.
      const [row] = rowsOf(
        await this.db
          .execute(sql`select encode(substring(data from ${offset + 1} for ${length}), 'base64') as data
          from attachment_blob_chunks where blob_id = ${blob.id}::uuid and seq = ${seq}`),
      ) as { data: string }[];
      if (!row) throw new Error(`blob ${blob.id} has no chunk ${seq}: it was removed`);
      const bytes = Buffer.from(row.data, 'base64');
      if (bytes.length === 0) throw new Error(`blob ${blob.id} ends before byte ${at}`);
      yield bytes;
      at += bytes.length;
    }
  }

  /** Nothing to do: the chunks go with their blob row (on delete cascade). */
  async remove(): Promise<void> {}

  /** None can exist: a chunk cannot outlive its blob row. */
  async removeOrphans(): Promise<number> {
    return 0;
  }
}
