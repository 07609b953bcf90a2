import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rm, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/validation/is-uuid';
import type { BlobContent, BlobWriter } from './blob-content';

/** Bytes per read of a download: as the database store reads, so both stream alike. */
const READ_BYTES = 64 * 1024;

/** Ids asked about at once when looking for orphans. */
const ORPHAN_BATCH = 500;

/**
 * A blob's content as one file, `<root>/<first two characters of its id>/<id>` (ATTACHMENT_DIR; the
 * embedded database's default, beside its data directory). The bytes go from the socket to the file
 * and back without passing through the database: on the embedded one, which runs in this process,
 * every piece also crossed its WebAssembly memory and three copies of its answer (bench/README
 * "Attachments"). Names are the blob ids the database made, never a client's filename. A file is
 * created only after its blob row (so a file without a row is an orphan), synced before the upload
 * is acknowledged, and removed after its row.
 */
export class FilesystemBlobContent implements BlobContent {
  private constructor(private readonly root: string) {}

  /** The store on `root`, created (and its creation made durable) if missing. */
  static async open(root: string): Promise<FilesystemBlobContent> {
    await mkdir(root, { recursive: true, mode: 0o700 });
    await syncDirectory(dirname(root));
    return new FilesystemBlobContent(root);
  }

  writer(blobId: string): BlobWriter {
    const path = this.pathOf(blobId);
    let handle: FileHandle | null = null;
    return {
      write: (bytes) =>
        refusedWhenFull(async () => {
          if (!handle) {
            await mkdir(dirname(path), { recursive: true, mode: 0o700 });
            handle = await open(path, 'wx', 0o600);
          }
          for (let at = 0; at < bytes.length;) at += (await handle.write(bytes, at)).bytesWritten;
        }),
      finish: () =>
        refusedWhenFull(async () => {
          if (!handle) return;
          await handle.sync();
          // The file's name, and its folder's in the root, must outlive a crash too.
          await syncDirectory(dirname(path));
          await syncDirectory(this.root);
        }),
      close: async () => {
        const open = handle;
        handle = null;
        await open?.close();
      },
    };
  }

  async *read(blob: { id: string }, start: number, end: number): AsyncIterable<Buffer> {
    let at = start;
    for await (const piece of createReadStream(this.pathOf(blob.id), {
      start,
      end,
      highWaterMark: READ_BYTES,
    }) as AsyncIterable<Buffer>) {
      at += piece.length;
      yield piece;
    }
    if (at <= end) throw new Error(`blob ${blob.id} ends before byte ${at}`);
  }

  async remove(blobIds: string[]): Promise<void> {
    for (const id of blobIds) await rm(this.pathOf(id), { force: true });
  }

  async removeOrphans(existing: (blobIds: string[]) => Promise<Set<string>>): Promise<number> {
    let removed = 0;
    for (const folder of await readdir(this.root, { withFileTypes: true })) {
      if (!folder.isDirectory()) continue;
      const ids = (await readdir(join(this.root, folder.name))).filter(isUuid);
      for (let from = 0; from < ids.length; from += ORPHAN_BATCH) {
        const batch = ids.slice(from, from + ORPHAN_BATCH);
        const known = await existing(batch);
        const orphans = batch.filter((id) => !known.has(id));
        await this.remove(orphans);
        removed += orphans.length;
      }
    }
    return removed;
  }

  private pathOf(blobId: string): string {
    // Ids come from the database; checked anyway, since they become a path.
    if (!isUuid(blobId)) throw new Error(`not a blob id: ${JSON.stringify(blobId)}`);
    const id = blobId.toLowerCase();
    return join(this.root, id.slice(0, 2), id);
  }
}

/**
 * A full disk (or quota) refuses the upload with 507 ATTACHMENT_STORAGE_FULL instead of failing it
 * as a 500: the upload service then removes what it wrote, and the service goes on.
 */
async function refusedWhenFull(work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT') throw new AppError('ATTACHMENT_STORAGE_FULL');
    throw error;
  }
}

async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
