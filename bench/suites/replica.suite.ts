import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { BENCH_SERVER_URL, createBenchDatabase, seedRecords } from '../lib/bench-database';
import { load, report, type LoadResult } from '../lib/load';
import { ROOT } from '../lib/processes';
import { loginAdmin, startService } from '../lib/servers';
import { BENCH_SUBMISSION, createBenchForm } from './form-fixture';

const run = promisify(execFile);
const RECORDS = Number(process.env.BENCH_REPLICA_RECORDS ?? 200_000);
const DURATION = Number(process.env.BENCH_DURATION_S ?? 10);
/** A replica of the benchmark server; unset: one is started (scripts/replica-start) and removed. */
const REPLICA_SERVER_URL = process.env.BENCH_REPLICA_URL;
const REPLICA_PORT = Number(process.env.BENCH_REPLICA_PORT ?? 5444);
const READER = { email: 'bench-reader@example.com', password: 'bench-reader-password', name: 'Reader' };

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function scalar(url: string, text: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return String(Object.values((await client.query(text)).rows[0])[0]);
  } finally {
    await client.end();
  }
}

/** Until the replica has replayed what the primary has now (the seeded records included). */
async function replicaCaughtUp(primaryUrl: string, replicaUrl: string): Promise<void> {
  const target = await scalar(primaryUrl, 'select pg_current_wal_lsn()::text');
  for (const deadline = Date.now() + 600_000; Date.now() < deadline;) {
    try {
      const behind = await scalar(
        replicaUrl,
        `select pg_wal_lsn_diff('${target}', pg_last_wal_replay_lsn()) > 0`,
      );
      if (behind === 'false') return;
    } catch {
      // the database not replayed yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('the replica did not catch up within 10 minutes');
}

async function downloadCsv(url: string, token: string): Promise<{ seconds: number; bytes: number }> {
  const started = process.hrtime.bigint();
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (!response.ok || !response.body) throw new Error(`export failed: ${response.status}`);
  let bytes = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, bytes };
}

/**
 * The read figures on the pair, with and without the replica: list, grid, stats (4 connections,
 * DURATION s each) and a whole CSV export, each while 8 connections create records on the primary
 * through the same service; then the create figure alone and under back-to-back CSV exports. The
 * reads are a second user's (who writes nothing), as a finance team exporting while others submit.
 */
export async function runReplicaBenchmarks(): Promise<void> {
  const started = REPLICA_SERVER_URL ? null : `/tmp/bench-replica-${process.pid}`;
  const replicaServer =
    REPLICA_SERVER_URL ??
    (() => {
      const parsed = new URL(BENCH_SERVER_URL);
      parsed.port = String(REPLICA_PORT);
      return parsed.toString();
    })();
  if (started) {
    await run(`${ROOT}/scripts/replica-start`, [
      String(REPLICA_PORT),
      started,
      new URL(BENCH_SERVER_URL).port || '5432',
    ]);
  }
  const database = await createBenchDatabase();
  try {
    const { configId } = await seedRecords(database.url, RECORDS);
    const replicaUrl = withDatabase(replicaServer, new URL(database.url).pathname.slice(1));
    await replicaCaughtUp(database.url, replicaUrl);
    for (const mode of ['primary only', 'with replica'] as const) {
      await measureMode(mode, database.url, mode === 'with replica' ? replicaUrl : null, configId);
    }
  } finally {
    await database.drop();
    if (started) await run(`${ROOT}/scripts/replica-stop`, [started]).catch(() => undefined);
  }
}

async function measureMode(
  mode: string,
  databaseUrl: string,
  replicaUrl: string | null,
  configId: string,
): Promise<void> {
  const service = await startService(databaseUrl, 3951, {
    DATABASE_POOL_SIZE: '16',
    LOG_LEVEL: 'warn',
    ...(replicaUrl ? { DATABASE_REPLICA_URLS: replicaUrl } : {}),
  });
  try {
    const admin = await loginAdmin(service);
    const json = { 'content-type': 'application/json' };
    const created = await fetch(`${service.url}/api/users`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${admin}` },
      body: JSON.stringify({ ...READER, role: 'admin' }),
    });
    if (created.status !== 201 && created.status !== 409)
      throw new Error(`reader not created: ${created.status} ${await created.text()}`);
    const reader = (await (
      await fetch(`${service.url}/auth/login`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ email: READER.email, password: READER.password }),
      })
    ).json()) as { token: string };
    const readHeaders = { authorization: `Bearer ${reader.token}` };
    const formId = await createBenchForm(service.url, admin);
    const creates = (seconds: number) =>
      load({
        url: `${service.url}/api/data/${formId}`,
        method: 'POST',
        headers: { ...json, authorization: `Bearer ${admin}` },
        body: JSON.stringify(BENCH_SUBMISSION),
        connections: 8,
        durationSeconds: seconds,
      });
    await creates(2);

    const reads = {
      list: `/api/data/${configId}?filters=${encodeURIComponent(JSON.stringify({ city: 'Szeged' }))}&limit=20`,
      grid: `/api/data/${configId}?filter=${encodeURIComponent(
        JSON.stringify([['data.age', '>', 40], 'and', ['data.name', 'contains', '99']]),
      )}&sort=${encodeURIComponent(JSON.stringify([{ selector: 'data.score', desc: true }]))}&take=20&requireTotalCount=true`,
      stats: `/api/data/${configId}/stats`,
    };
    for (const [figure, path] of Object.entries(reads)) {
      const [read, create] = await Promise.all([
        load({ url: service.url + path, headers: readHeaders, connections: 4, durationSeconds: DURATION }),
        creates(DURATION),
      ]);
      report(readFigure(figure, mode, read, create));
    }
    const exportUrl = `${service.url}/api/data/${configId}/export?format=csv`;
    const [csv, createDuringCsv] = await Promise.all([
      downloadCsv(exportUrl, reader.token),
      creates(DURATION),
    ]);
    report({
      figure: 'replica-export-csv',
      mode,
      records: RECORDS,
      rowsPerSec: Math.round(RECORDS / csv.seconds),
      megabytes: Math.round(csv.bytes / 1e6),
      createReqPerSec: createDuringCsv.requestsPerSecond,
    });

    // The create figure alone, then with CSV exports back to back for as long.
    const alone = await creates(DURATION);
    let exporting = true;
    let exports = 0;
    const exportLoop = (async () => {
      while (exporting) {
        await downloadCsv(exportUrl, reader.token);
        exports++;
      }
    })();
    const underExport = await creates(DURATION);
    exporting = false;
    await exportLoop;
    const ratio = underExport.requestsPerSecond / alone.requestsPerSecond;
    report({
      figure: 'replica-create-under-export',
      mode,
      createAloneReqPerSec: alone.requestsPerSecond,
      createUnderExportReqPerSec: underExport.requestsPerSecond,
      p99Ms: underExport.p99,
      exportsCompleted: exports,
      ratio: Number(ratio.toFixed(2)),
      ...(replicaUrl
        ? { target: 'create under a concurrent export >= 0.9 x create alone', pass: ratio >= 0.9 }
        : { note: 'for comparison: the export reads the primary' }),
      non2xx: alone.non2xx + underExport.non2xx,
      routedReads: await routedReads(service.url),
    });
  } finally {
    await service.stop();
  }
}

/** The service's routed reads so far by the database that answered them (its /metrics). */
async function routedReads(serviceUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(/^fdws_db_routed_reads_total\{target="([^"]+)"\} (\d+)$/gm))
    counts[match[1]] = Number(match[2]);
  return counts;
}

function readFigure(figure: string, mode: string, read: LoadResult, create: LoadResult) {
  return {
    figure: `replica-${figure}`,
    mode,
    records: RECORDS,
    p50Ms: read.p50,
    p99Ms: read.p99,
    readReqPerSec: read.requestsPerSecond,
    createReqPerSec: create.requestsPerSecond,
    non2xx: read.non2xx + create.non2xx,
  };
}
