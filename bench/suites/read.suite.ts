import { createBenchDatabase, seedRecords } from '../lib/bench-database';
import { load, report } from '../lib/load';
import type { RunningServer } from '../lib/processes';
import { loginAdmin, startBaseline, startService } from '../lib/servers';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 1_000_000);
const DURATION = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = 4;

async function compareLatency(
  figure: string,
  ours: { url: string; headers: Record<string, string> },
  base: { url: string },
): Promise<void> {
  await load({ ...ours, connections: CONNECTIONS, amount: 20 });
  const baseline = await load({ url: base.url, connections: CONNECTIONS, durationSeconds: DURATION });
  const measured = await load({ ...ours, connections: CONNECTIONS, durationSeconds: DURATION });
  const ratio = measured.p50 / baseline.p50;
  report({
    figure,
    records: RECORDS,
    p50Ms: measured.p50,
    p99Ms: measured.p99,
    reqPerSec: measured.requestsPerSecond,
    non2xx: measured.non2xx,
    baselineP50Ms: baseline.p50,
    ratio: Number(ratio.toFixed(2)),
    target: 'p50 <= 1.5 x baseline p50',
    pass: ratio <= 1.5 && measured.non2xx === 0,
  });
}

/** Downloads a stream, counting rows (line feeds) and bytes; returns rows per second. */
async function download(url: string, headers: Record<string, string> = {}) {
  const started = process.hrtime.bigint();
  const response = await fetch(url, { headers });
  if (!response.ok || !response.body)
    throw new Error(`export failed: ${response.status} ${await response.text()}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { seconds, bytes, lines };
}

/** Each export format runs in a fresh service process, so its peak RSS (VmHWM) is its own. */
async function exportFigures(databaseUrl: string, baseline: RunningServer, configId: string) {
  let service = await startService(databaseUrl, 3943);
  let token = await loginAdmin(service);
  const auth = { authorization: `Bearer ${token}` };
  const base = await download(`${baseline.url}/export/${configId}`);
  const baseRowsPerSec = RECORDS / base.seconds;
  const csv = await download(`${service.url}/api/data/${configId}/export?format=csv`, auth);
  const csvRowsPerSec = RECORDS / csv.seconds;
  const csvPeak = service.peakRssMb();
  report({
    figure: 'export-csv',
    records: RECORDS,
    rowsPerSec: Math.round(csvRowsPerSec),
    megabytes: Math.round(csv.bytes / 1e6),
    peakRssMb: csvPeak,
    baselineCopyRowsPerSec: Math.round(baseRowsPerSec),
    ratio: Number((csvRowsPerSec / baseRowsPerSec).toFixed(2)),
    target: '>= 0.5 x baseline COPY rows/s, peak RSS <= 300 MB',
    pass: csvRowsPerSec >= 0.5 * baseRowsPerSec && csvPeak <= 300,
  });
  await service.stop();
  service = await startService(databaseUrl, 3943);
  token = await loginAdmin(service);
  const xlsx = await download(`${service.url}/api/data/${configId}/export?format=excel`, {
    authorization: `Bearer ${token}`,
  });
  const xlsxRowsPerSec = RECORDS / xlsx.seconds;
  const xlsxPeak = service.peakRssMb();
  report({
    figure: 'export-xlsx',
    records: RECORDS,
    rowsPerSec: Math.round(xlsxRowsPerSec),
    megabytes: Math.round(xlsx.bytes / 1e6),
    peakRssMb: xlsxPeak,
    target: '>= 25000 rows/s, peak RSS <= 300 MB',
    pass: xlsxRowsPerSec >= 25_000 && xlsxPeak <= 300,
  });
  await service.stop();
}

/** list, grid, stats and export on RECORDS seeded records, each next to the baseline. */
export async function runReadBenchmarks(): Promise<void> {
  const database = await createBenchDatabase();
  const seedStarted = Date.now();
  const { configId } = await seedRecords(database.url, RECORDS);
  report({ figure: 'seed', records: RECORDS, seconds: Math.round((Date.now() - seedStarted) / 1000) });
  const service = await startService(database.url, 3941);
  const baseline = await startBaseline(database.url, 3942);
  try {
    const token = await loginAdmin(service);
    const headers = { authorization: `Bearer ${token}` };
    const listQuery = `filters=${encodeURIComponent(JSON.stringify({ city: 'Szeged' }))}&limit=20`;
    await compareLatency(
      'list',
      { url: `${service.url}/api/data/${configId}?${listQuery}`, headers },
      { url: `${baseline.url}/list/${configId}?city=Szeged` },
    );
    const gridQuery = [
      `filter=${encodeURIComponent(JSON.stringify(['data.city', '=', 'Szeged']))}`,
      `sort=${encodeURIComponent(JSON.stringify([{ selector: 'data.age', desc: true }]))}`,
      'skip=0',
      'take=20',
      'requireTotalCount=true',
    ].join('&');
    await compareLatency(
      'grid',
      { url: `${service.url}/api/data/${configId}?${gridQuery}`, headers },
      { url: `${baseline.url}/grid/${configId}?city=Szeged` },
    );
    await compareLatency(
      'stats',
      { url: `${service.url}/api/data/${configId}/stats`, headers },
      { url: `${baseline.url}/stats/${configId}` },
    );
    await service.stop();
    await exportFigures(database.url, baseline, configId);
  } finally {
    await service.stop();
    await baseline.stop();
    await database.drop();
  }
}
