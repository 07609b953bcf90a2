import { createReadStream, createWriteStream, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Client } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { CITIES, createBenchDatabase } from '../lib/bench-database';
import { report } from '../lib/load';
import { cpuMsOf, sampleDatabaseCpu } from '../lib/process-cpu';
import { loginAdmin, startService } from '../lib/servers';
import { createBenchForm } from './form-fixture';

const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 1_000_000);
const HEADER = 'name,email,age,city,score,qty,price,active,joined,note';

/** A CSV of the benchmark form's fields, every row valid, written to a temporary file. */
async function writeCsv(path: string, rows: number): Promise<void> {
  async function* lines(): AsyncGenerator<string> {
    yield `${HEADER}\n`;
    let chunk = '';
    for (let n = 1; n <= rows; n++) {
      const city = CITIES[n % CITIES.length];
      chunk += `Person ${n},p${n}@example.com,${18 + (n % 60)},${city},${n % 997}.5,${n % 100},${(n % 50) + 0.99},${n % 2 === 0},2024-05-17,"row ${n}, imported"\n`;
      if (n % 10_000 === 0) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk) yield chunk;
  }
  await pipeline(Readable.from(lines()), createWriteStream(path));
}

/**
 * The baseline: psql-style COPY of the same file into a typed table: rows per second, and the CPU
 * time per row of the PostgreSQL backend doing it (in microseconds; null where /proc is not readable).
 */
async function copyBaseline(
  databaseUrl: string,
  path: string,
): Promise<{ rowsPerSec: number; cpuUsPerRow: number | null }> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`create table import_baseline (name text, email text, age int, city text, score numeric,
      qty int, price numeric, active boolean, joined date, note text)`);
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    const backendCpu = () => {
      try {
        return cpuMsOf(rows[0].pid);
      } catch {
        return null;
      }
    };
    const cpuBefore = backendCpu();
    const started = process.hrtime.bigint();
    await pipeline(
      createReadStream(path),
      client.query(copyFrom('copy import_baseline from stdin (format csv, header true)')),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpuAfter = backendCpu();
    await client.query('drop table import_baseline');
    return {
      rowsPerSec: ROWS / seconds,
      cpuUsPerRow: cpuBefore === null || cpuAfter === null ? null : ((cpuAfter - cpuBefore) * 1000) / ROWS,
    };
  } finally {
    await client.end();
  }
}

/** `import`: the service stores every row of the file (upload to `done`), against COPY of it. */
export async function runImportBenchmark(): Promise<void> {
  const database = await createBenchDatabase();
  const service = await startService(database.url, 3934);
  const path = join(tmpdir(), `bench-import-${Date.now()}.csv`);
  try {
    await writeCsv(path, ROWS);
    const baseline = await copyBaseline(database.url, path);
    const token = await loginAdmin(service);
    const configId = await createBenchForm(service.url, token);
    const serverCpuBefore = cpuMsOf(service.process.pid!);
    const databaseCpu = await sampleDatabaseCpu(database.url);
    const started = process.hrtime.bigint();
    const response = await fetch(`${service.url}/api/data/${configId}/import?mode=valid-rows`, {
      method: 'POST',
      headers: { 'content-type': 'text/csv', authorization: `Bearer ${token}` },
      body: Readable.toWeb(createReadStream(path)) as ReadableStream,
      duplex: 'half',
    });
    if (response.status !== 202) throw new Error(`import: ${response.status} ${await response.text()}`);
    const accepted = (await response.json()) as { id: string };
    const uploadSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const uploadServerCpuMs = cpuMsOf(service.process.pid!) - serverCpuBefore;
    let result: { status: string; rowsStored: number; rowsRefused: number };
    for (;;) {
      const poll = await fetch(`${service.url}/api/data/imports/${accepted.id}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      result = (await poll.json()) as typeof result;
      if (result.status !== 'receiving' && result.status !== 'storing') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const serverCpuMs = cpuMsOf(service.process.pid!) - serverCpuBefore;
    const databaseCpuMs = await databaseCpu.stop();
    const rowsPerSec = Math.round(ROWS / seconds);
    const peakRssMb = service.peakRssMb();
    report({
      figure: 'import',
      rows: ROWS,
      fileMb: Math.round(statSync(path).size / 1e6),
      status: result.status,
      rowsStored: result.rowsStored,
      uploadSeconds: Number(uploadSeconds.toFixed(1)),
      seconds: Number(seconds.toFixed(1)),
      rowsPerSec,
      peakRssMb,
      // CPU per row: what the machine's load does not change (wall time it does).
      serverCpuUsPerRow: Math.round((serverCpuMs * 1000) / ROWS),
      uploadServerCpuUsPerRow: Math.round((uploadServerCpuMs * 1000) / ROWS),
      databaseCpuUsPerRow: databaseCpuMs === null ? null : Math.round((databaseCpuMs * 1000) / ROWS),
      loadAverage: loadavg().map((load) => Number(load.toFixed(1))),
      copyRowsPerSec: Math.round(baseline.rowsPerSec),
      copyCpuUsPerRow: baseline.cpuUsPerRow === null ? null : Number(baseline.cpuUsPerRow.toFixed(1)),
      ratio: Number((rowsPerSec / baseline.rowsPerSec).toFixed(3)),
      // The same ratio in CPU time (service and its database backends against COPY's backend): what the load does not move.
      cpuRatio:
        baseline.cpuUsPerRow === null || databaseCpuMs === null
          ? null
          : Number(((baseline.cpuUsPerRow * ROWS) / (serverCpuMs + databaseCpuMs) / 1000).toFixed(3)),
      target: '>= 20000 rows/s with peak RSS < 250 MB',
      pass: result.rowsStored === ROWS && rowsPerSec >= 20_000 && peakRssMb < 250,
    });
  } finally {
    rmSync(path, { force: true });
    await service.stop();
    await database.drop();
  }
}
