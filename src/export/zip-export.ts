import { PassThrough, type Readable } from 'node:stream';
import archiver from 'archiver';
import type { AttachmentsService } from '../attachments/attachments.service';
import type { ListedRecordRow } from '../data/record.mapper';
import type { OnRecordBatch } from '../data/record-cursor.repository';
import { drainOrClose } from './drain-or-close';
import { JsonExportWriter } from './json-export.writer';

/**
 * `format=zip`: `records.json` (the JSON export) and every file of those records under
 * `files/<dataId>/<attachmentId>/<name>`, streamed: records are read in batches as the archive takes
 * them, then each file's bytes as its entry is written (files stored, not compressed again).
 */
export function zipExport(
  forEachBatch: (onBatch: OnRecordBatch) => Promise<void>,
  attachments: AttachmentsService,
  schemaOrder: readonly string[],
  onError: (error: Error) => void,
): Readable {
  const zip = archiver('zip', { zlib: { level: 6 } });
  const records = new PassThrough();
  zip.append(records, { name: 'records.json' });
  // A download the client abandoned destroys the archive: the records' reading then stops too.
  zip.once('close', () => records.destroy());
  const write = async (chunk: string | Buffer): Promise<boolean> => {
    if (records.destroyed) return false;
    if (!records.write(chunk)) await drainOrClose(records);
    return !records.destroyed;
  };
  const writer = new JsonExportWriter(write, schemaOrder);
  const files: { path: string; open: () => Readable }[] = [];
  const build = async () => {
    await forEachBatch(async (rows: ListedRecordRow[]) => {
      files.push(...(await attachments.filesOf(rows.map((row) => row.id))));
      return writer.writeBatch(rows);
    });
    await writer.end();
    records.end();
    for (const file of files) zip.append(file.open(), { name: file.path, store: true });
    await zip.finalize();
  };
  build().catch((error: unknown) => {
    onError(error as Error);
    zip.destroy(error as Error);
  });
  return zip;
}
