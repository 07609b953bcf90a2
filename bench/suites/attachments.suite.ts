import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createBenchDatabase } from '../lib/bench-database';
import { report } from '../lib/load';
import { peakRssDuring, type RunningServer } from '../lib/processes';
import { loginAdmin, startService } from '../lib/servers';

const MB = 1024 * 1024;
const FILE_MB = Number(process.env.BENCH_ATTACHMENT_MB ?? 200);

/** FILE_MB of pseudo-random bytes, made piece by piece (never the whole file in this process either). */
function fileStream(): Readable {
  // Random for each file: a second file is stored beside the first, not deduplicated into it.
  const piece = randomBytes(MB);
  let sent = 0;
  return new Readable({
    read() {
      if (sent === FILE_MB) return this.push(null);
      // Each MB differs (its first bytes count up), so the chunks do not repeat.
      const copy = Buffer.from(piece);
      copy.writeUInt32BE(sent++, 0);
      this.push(copy);
    },
  });
}

async function measure(database: string, url: string | null): Promise<void> {
  // ATTACHMENT_STORE's `auto`: files beside the embedded database, rows on PostgreSQL.
  const chosen = process.env.BENCH_ATTACHMENT_STORE;
  const store = chosen ?? (url === null ? 'filesystem' : 'database');
  const service = await startService(url, 3941, {
    ATTACHMENT_MAX_BYTES: String((FILE_MB + 1) * MB),
    ATTACHMENT_MAX_RECORD_BYTES: String((FILE_MB + 1) * MB),
    ...(chosen && { ATTACHMENT_STORE: chosen }),
  });
  try {
    const token = await loginAdmin(service);
    const auth = { authorization: `Bearer ${token}` };
    const config = await fetch(`${service.url}/api/configs`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        title: 'Files',
        type: 'form',
        schema: { type: 'object', properties: { file: { type: 'string', format: 'attachment' } } },
      }),
    }).then((r) => r.json() as Promise<{ id: string }>);
    // Twice: the first transfers of a new process also fill what any work would (the embedded
    // database's buffer pool and WAL buffers, V8's young generation); the second shows what a
    // transfer itself holds.
    for (const moment of ['first', 'second']) {
      const before = service.rssMb();
      const transfer = await uploadAndDownload(service, auth, config.id);
      report({
        figure: `attachment ${FILE_MB} MB`,
        database,
        store,
        transfer: moment,
        fileMb: FILE_MB,
        rssBeforeMb: before,
        uploadPeakRiseMb: transfer.uploadPeak - before,
        downloadPeakRiseMb: transfer.downloadPeak - before,
        uploadMbPerSec: Number((FILE_MB / (transfer.uploadMs / 1000)).toFixed(1)),
        downloadMbPerSec: Number((FILE_MB / (transfer.downloadMs / 1000)).toFixed(1)),
        target: 'RSS rise < 50 MB for upload and download',
      });
    }
  } finally {
    await service.stop();
  }
}

/** One FILE_MB upload, linked to a new record and downloaded (hashed): each one's time and RSS peak. */
async function uploadAndDownload(service: RunningServer, auth: Record<string, string>, configId: string) {
  let uploaded: { attachmentId: string; sha256: string } | undefined;
  let uploadMs = 0;
  const uploadPeak = await peakRssDuring(service, async () => {
    const started = performance.now();
    const response = await fetch(`${service.url}/api/data/${configId}/attachments?filename=big.bin`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      body: Readable.toWeb(fileStream()) as ReadableStream,
      duplex: 'half',
    });
    uploaded = (await response.json()) as typeof uploaded;
    uploadMs = performance.now() - started;
    if (!response.ok) throw new Error(`upload failed: ${JSON.stringify(uploaded)}`);
  });
  const record = await fetch(`${service.url}/api/data/${configId}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ file: uploaded!.attachmentId }),
  }).then((r) => r.json() as Promise<{ dataId: string }>);
  let downloadMs = 0;
  const downloadPeak = await peakRssDuring(service, async () => {
    const started = performance.now();
    const response = await fetch(
      `${service.url}/api/data/${configId}/${record.dataId}/attachments/${uploaded!.attachmentId}`,
      { headers: auth },
    );
    const hash = createHash('sha256');
    for await (const piece of response.body as unknown as AsyncIterable<Uint8Array>) hash.update(piece);
    downloadMs = performance.now() - started;
    if (hash.digest('hex') !== uploaded!.sha256) throw new Error('the download differs from the upload');
  });
  return { uploadPeak, downloadPeak, uploadMs, downloadMs };
}

/** The same bytes written to a local file: the ceiling an upload is compared with. */
async function fileWriteBaseline(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-attachments-'));
  try {
    const started = performance.now();
    const hash = createHash('sha256');
    await pipeline(
      fileStream().on('data', (piece: Buffer) => hash.update(piece)),
      createWriteStream(join(dir, 'big.bin')),
    );
    const ms = performance.now() - started;
    report({
      figure: 'attachment baseline: hash + file write',
      fileMb: FILE_MB,
      mbPerSec: Number((FILE_MB / (ms / 1000)).toFixed(1)),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A FILE_MB upload and download through the service (embedded PGlite, and PostgreSQL: a throw-away
 * database, or BENCH_ATTACHMENTS_DATABASE_URL), with the server's resident memory before and its
 * peak during each, next to a hash + file write of the same bytes.
 */
export async function runAttachmentBenchmarks(): Promise<void> {
  await fileWriteBaseline();
  await measure('pglite', null);
  const given = process.env.BENCH_ATTACHMENTS_DATABASE_URL;
  const database = given ? null : await createBenchDatabase();
  try {
    await measure('postgres', given ?? database!.url);
  } finally {
    await database?.drop();
  }
}
