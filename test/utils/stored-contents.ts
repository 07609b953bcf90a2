import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sql } from 'drizzle-orm';
import { BLOB_CONTENT } from '../../src/attachments/blob-content';
import { FilesystemBlobContent } from '../../src/attachments/filesystem-blob-content';
import { rowsOf } from '../../src/database/raw-rows';
import type { TestApp } from './test-app';

/** The attachment store the app chose (ATTACHMENT_STORE; `auto` picks the filesystem on PGlite). */
export function attachmentStoreOf(t: TestApp): 'database' | 'filesystem' {
  return t.app.get(BLOB_CONTENT) instanceof FilesystemBlobContent ? 'filesystem' : 'database';
}

/**
 * How many blobs have bytes in the app's store: files in its folder, or blobs with chunk rows. A
 * refusal must leave this as it was, a deduplicated upload must not add to it.
 */
export async function storedContents(t: TestApp): Promise<number> {
  if (attachmentStoreOf(t) === 'filesystem') {
    const root = resolve(t.config.attachmentDir);
    return readdirSync(root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .reduce((files, folder) => files + readdirSync(join(root, folder.name)).length, 0);
  }
  const [row] = rowsOf(
    await t.database.client.db.execute(
      sql`select count(distinct blob_id)::int as n from attachment_blob_chunks`,
    ),
  ) as { n: number }[];
  return row.n;
}
