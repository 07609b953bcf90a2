import { createBenchDatabase, seedRecords } from '../lib/bench-database';
import { load, report } from '../lib/load';
import { selectedProfiles, type SettingsProfile } from '../lib/profiles';
import { peakRssDuring } from '../lib/processes';
import { loginAdmin, startBaseline, startService } from '../lib/servers';
import { BENCH_SUBMISSION, createBenchForm } from './form-fixture';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 1_000_000);
const GROWTH_RECORDS = Number(process.env.BENCH_GROWTH_RECORDS ?? 100_000);
const DURATION = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = 4;
const WARM_CREATE_SECONDS = Number(process.env.BENCH_WARM_CREATE_S ?? 60);

/** The questions of the read figures, asked of the service and of the baseline. */
const GRID_AGE_ABOVE = 40;
const GRID_NAME_CONTAINS = '99';
const LIST_CITY = 'Szeged';

function serviceQueries(configId: string) {
  const grid = [
    `filter=${encodeURIComponent(
      JSON.stringify([
        ['data.age', '>', GRID_AGE_ABOVE],
        'and',
        ['data.name', 'contains', GRID_NAME_CONTAINS],
      ]),
    )}`,
    `sort=${encodeURIComponent(JSON.stringify([{ selector: 'data.score', desc: true }]))}`,
    'skip=0',
    'take=20',
    'requireTotalCount=true',
  ].join('&');
  return {
    list: `/api/data/${configId}?filters=${encodeURIComponent(JSON.stringify({ city: LIST_CITY }))}&limit=20`,
    grid: `/api/data/${configId}?${grid}`,
    stats: `/api/data/${configId}/stats`,
  };
}

function baselineQueries(configId: string) {
  return {
    list: `/list/${configId}?city=${encodeURIComponent(LIST_CITY)}`,
    grid: `/grid/${configId}?ageAbove=${GRID_AGE_ABOVE}&nameContains=${GRID_NAME_CONTAINS}&skip=0&take=20`,
    stats: `/stats/${configId}`,
  };
}

type Figure = 'list' | 'grid' | 'stats';

interface Dataset {
  records: number;
  url: string;
  configId: string;
  drop(): Promise<void>;
}

async function seededDataset(records: number): Promise<Dataset> {
  const database = await createBenchDatabase();
  const started = Date.now();
  const { configId } = await seedRecords(database.url, records);
  report({ figure: 'seed', records, seconds: Math.round((Date.now() - started) / 1000) });
  return { records, url: database.url, configId, drop: database.drop };
}

/**
 * One figure: warm both, then baseline and service alternately (twice each, DURATION/2 seconds a
 * turn) so drift on a noisy machine hits both; the p50 of each is the mean of its turns.
 */
async function measure(
  service: { url: string; headers: Record<string, string> },
  baseline: { url: string },
): Promise<{ service: number; baseline: number; serviceP99: number; non2xx: number }> {
  await load({ ...service, connections: CONNECTIONS, amount: 20 });
  await load({ ...baseline, connections: CONNECTIONS, amount: 20 });
  const turns = { service: [] as number[], baseline: [] as number[], p99: [] as number[], non2xx: 0 };
  for (let turn = 0; turn < 2; turn++) {
    const base = await load({ ...baseline, connections: CONNECTIONS, durationSeconds: DURATION / 2 });
    const ours = await load({ ...service, connections: CONNECTIONS, durationSeconds: DURATION / 2 });
    turns.baseline.push(base.p50);
    turns.service.push(ours.p50);
    turns.p99.push(ours.p99);
    turns.non2xx += ours.non2xx + base.non2xx;
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  return {
    service: mean(turns.service),
    baseline: mean(turns.baseline),
    serviceP99: Math.max(...turns.p99),
    non2xx: turns.non2xx,
  };
}

async function latencyFigures(
  profile: SettingsProfile,
  dataset: Dataset,
  port: number,
  judged: boolean,
): Promise<Record<Figure, { service: number; baseline: number }>> {
  const service = await startService(dataset.url, port, profile.env);
  const baseline = await startBaseline(dataset.url, port + 1);
  const result = {} as Record<Figure, { service: number; baseline: number }>;
  try {
    const token = await loginAdmin(service);
    const headers = { authorization: `Bearer ${token}` };
    const ours = serviceQueries(dataset.configId);
    const theirs = baselineQueries(dataset.configId);
    for (const figure of ['list', 'grid', 'stats'] as const) {
      const measured = await measure(
        { url: service.url + ours[figure], headers },
        { url: baseline.url + theirs[figure] },
      );
      const ratio = measured.service / measured.baseline;
      result[figure] = { service: measured.service, baseline: measured.baseline };
      report({
        figure,
        profile: profile.name,
        records: dataset.records,
        p50Ms: Math.round(measured.service),
        p99Ms: Math.round(measured.serviceP99),
        baselineP50Ms: Math.round(measured.baseline),
        ratio: Number(ratio.toFixed(2)),
        // The smaller data set feeds the growth figure only; its ratio has no target of its own.
        ...(judged
          ? { target: 'p50 <= 1.5 x baseline p50', pass: ratio <= 1.5 && measured.non2xx === 0 }
          : { note: 'input of the growth figure', non2xx: measured.non2xx }),
      });
    }
  } finally {
    await service.stop();
    await baseline.stop();
  }
  return result;
}

/** Downloads a stream, counting bytes; returns the seconds it took. */
async function download(url: string, headers: Record<string, string> = {}) {
  const started = process.hrtime.bigint();
  const response = await fetch(url, { headers });
  if (!response.ok || !response.body)
    throw new Error(`export failed: ${response.status} ${await response.text()}`);
  let bytes = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { seconds, bytes };
}

/** Each export format runs in a fresh service process, so its peak RSS (VmHWM) is its own. */
async function exportFigures(profile: SettingsProfile, dataset: Dataset, port: number): Promise<void> {
  const baseline = await startBaseline(dataset.url, port + 1);
  try {
    const base = await download(`${baseline.url}/export/${dataset.configId}`);
    const baseRowsPerSec = dataset.records / base.seconds;
    for (const format of ['csv', 'excel'] as const) {
      const service = await startService(dataset.url, port, profile.env);
      try {
        const token = await loginAdmin(service);
        const result = await download(`${service.url}/api/data/${dataset.configId}/export?format=${format}`, {
          authorization: `Bearer ${token}`,
        });
        const rowsPerSec = dataset.records / result.seconds;
        const peak = service.peakRssMb();
        if (format === 'csv') {
          const ratio = rowsPerSec / baseRowsPerSec;
          report({
            figure: 'export-csv',
            profile: profile.name,
            records: dataset.records,
            rowsPerSec: Math.round(rowsPerSec),
            megabytes: Math.round(result.bytes / 1e6),
            peakRssMb: peak,
            baselineCopyRowsPerSec: Math.round(baseRowsPerSec),
            ratio: Number(ratio.toFixed(2)),
            target: '>= 0.5 x baseline COPY rows/s, peak RSS <= 150 MB',
            pass: ratio >= 0.5 && peak <= 150,
          });
        } else {
          report({
            figure: 'export-xlsx',
            profile: profile.name,
            records: dataset.records,
            rowsPerSec: Math.round(rowsPerSec),
            megabytes: Math.round(result.bytes / 1e6),
            peakRssMb: peak,
            target: '>= 25000 rows/s, peak RSS <= 300 MB',
            pass: rowsPerSec >= 25_000 && peak <= 300,
          });
        }
      } finally {
        await service.stop();
      }
    }
  } finally {
    await baseline.stop();
  }
}

/**
 * `warm-memory`: one service process on PostgreSQL serves the read figures' requests (list, grid
 * and stats on the large data set, DURATION / 2 seconds each), then WARM_CREATE_SECONDS of creates
 * on a form of its own; its resident memory then (target <= 220 MB). Then, in that warm process, a
 * CSV and an XLSX export of the large data set, each with its peak over the resident memory just
 * before it (targets: adding <= 60 MB and <= 150 MB).
 */
async function warmMemoryFigure(profile: SettingsProfile, dataset: Dataset, port: number): Promise<void> {
  const service = await startService(dataset.url, port, profile.env);
  try {
    const token = await loginAdmin(service);
    const headers = { authorization: `Bearer ${token}` };
    const queries = serviceQueries(dataset.configId);
    let non2xx = 0;
    for (const figure of ['list', 'grid', 'stats'] as const) {
      const url = service.url + queries[figure];
      non2xx += (await load({ url, headers, connections: CONNECTIONS, durationSeconds: DURATION / 2 }))
        .non2xx;
    }
    const formId = await createBenchForm(service.url, token);
    const creates = await load({
      url: `${service.url}/api/data/${formId}`,
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(BENCH_SUBMISSION),
      connections: 16,
      durationSeconds: WARM_CREATE_SECONDS,
    });
    non2xx += creates.non2xx;
    const warmMb = service.rssMb();
    const rise = async (format: 'csv' | 'excel') => {
      const before = service.rssMb();
      const url = `${service.url}/api/data/${dataset.configId}/export?format=${format}`;
      return (await peakRssDuring(service, () => download(url, headers))) - before;
    };
    const csvRiseMb = await rise('csv');
    const xlsxRiseMb = await rise('excel');
    report({
      figure: 'warm-memory',
      profile: profile.name,
      records: dataset.records,
      afterReadsAndCreatesMb: warmMb,
      creates: creates.requests,
      csvExportRiseMb: csvRiseMb,
      xlsxExportRiseMb: xlsxRiseMb,
      non2xx,
      target: `<= 220 MB after the read figures' requests and ${WARM_CREATE_SECONDS} s of creates; then an export adding <= 60 MB (CSV), <= 150 MB (XLSX)`,
      pass: warmMb <= 220 && csvRiseMb <= 60 && xlsxRiseMb <= 150 && non2xx === 0,
    });
  } finally {
    await service.stop();
  }
}

/**
 * list, grid, stats and export on RECORDS seeded records, each next to the baseline, for each
 * settings profile; then list, grid and stats on GROWTH_RECORDS for the growth figure; last, the
 * memory of a warm process for each profile.
 */
export async function runReadBenchmarks(): Promise<void> {
  const large = await seededDataset(RECORDS);
  const small = await seededDataset(GROWTH_RECORDS);
  try {
    for (const profile of selectedProfiles()) {
      const atLarge = await latencyFigures(profile, large, 3941, true);
      await exportFigures(profile, large, 3943);
      const atSmall = await latencyFigures(profile, small, 3945, false);
      for (const figure of ['list', 'grid', 'stats'] as const) {
        const growth = atLarge[figure].service / atSmall[figure].service;
        const baselineGrowth = atLarge[figure].baseline / atSmall[figure].baseline;
        const limit = large.records / small.records;
        report({
          figure: `growth-${figure}`,
          profile: profile.name,
          records: [small.records, large.records],
          p50Ms: [Math.round(atSmall[figure].service), Math.round(atLarge[figure].service)],
          ratio: Number(growth.toFixed(2)),
          // How much the hand-written SQL itself grows on the same data, for comparison.
          baselineRatio: Number(baselineGrowth.toFixed(2)),
          target: `p50 at ${large.records} / p50 at ${small.records} <= ${limit} (no worse than linear)`,
          pass: growth <= limit,
        });
      }
    }
    // Last: its creates add rows to the large data set's table, which no figure after it reads.
    for (const profile of selectedProfiles()) await warmMemoryFigure(profile, large, 3947);
  } finally {
    await large.drop();
    await small.drop();
  }
}
