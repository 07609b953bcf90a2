// Create throughput of two builds of the service side by side, against the baseline insert, on one
// database: turns alternate baseline, A, B, so the machine's slow and fast moments fall on all three.
// For a change whose effect is smaller than the noise between two `npm run bench` runs:
//   npm run build && cp -r dist dist-b   (build B), change the code, npm run build   (build A)
//   BENCH_BUILD_B=dist-b node -r @swc-node/register bench/compare-builds.ts
// BENCH_PROFILE picks the settings profile (defaults or production), BENCH_TURNS the turns (3).
// BENCH_ENV_A / BENCH_ENV_B (JSON objects) add variables to one side: one build, two settings, e.g.
//   BENCH_BUILD_B=dist BENCH_ENV_B='{"DATABASE_PREPARED_STATEMENTS":"true"}'
// BENCH_SEPARATE_DATABASES=true gives build B a database of its own, which it migrates itself when it
// starts (from the migrations of its checkout: B runs in the folder above its dist): for a build from before a migration (its schema differs), e.g. a release before versions:
//   git worktree add ../before <commit> && (cd ../before && npm run build) &&
//   BENCH_BUILD_B=../before/dist BENCH_SEPARATE_DATABASES=true node -r @swc-node/register bench/compare-builds.ts
// BENCH_POOLER_URL (a PgBouncer in front of the bench server, every database passed through) runs
// side A through it, with DATABASE_LISTEN_URL straight to the server.
import { resolve } from 'node:path';
import { createBenchDatabase } from './lib/bench-database';
import { load } from './lib/load';
import { PROFILES } from './lib/profiles';
import { startServer } from './lib/processes';
import { cpuMsOf } from './lib/process-cpu';
import { BENCH_ADMIN, loginAdmin, startBaseline } from './lib/servers';
import { BENCH_SUBMISSION, createBenchForm } from './suites/form-fixture';

const PROFILE = PROFILES.find((p) => p.name === (process.env.BENCH_PROFILE ?? 'defaults')) ?? PROFILES[0];
const BUILD_A = process.env.BENCH_BUILD_A ?? 'dist';
const BUILD_B = process.env.BENCH_BUILD_B;
const TURNS = Number(process.env.BENCH_TURNS ?? 3);
const SECONDS = 6;

async function main(): Promise<void> {
  if (!BUILD_B) throw new Error('BENCH_BUILD_B (the folder of the second build) is required');
  const database = await createBenchDatabase();
  const separate = process.env.BENCH_SEPARATE_DATABASES === 'true';
  const databaseB = separate ? await createBenchDatabase({ migrated: false }) : database;
  const env = {
    JWT_SECRET: 'bench-secret-0123456789abcdef',
    ADMIN_EMAIL: BENCH_ADMIN.email,
    ADMIN_PASSWORD: BENCH_ADMIN.password,
    THROTTLE_LIMIT: '10000000',
    THROTTLE_AUTH_LIMIT: '10000000',
    DATABASE_URL: database.url,
    ...PROFILE.env,
  };
  // The production profile's metrics listener has a port of its own: B's is the next one.
  const metricsPort = PROFILE.env.METRICS_PORT;
  const metricsPortB: Record<string, string> = metricsPort
    ? { METRICS_PORT: String(Number(metricsPort) + 1) }
    : {};
  const envOf = (name: string): Record<string, string> => JSON.parse(process.env[name] ?? '{}');
  const pooled: Record<string, string> = process.env.BENCH_POOLER_URL
    ? {
        DATABASE_URL: withDatabaseOf(process.env.BENCH_POOLER_URL, database.url),
        DATABASE_LISTEN_URL: database.url,
      }
    : {};
  const a = await startServer([`${BUILD_A}/main.js`], { ...env, ...pooled, ...envOf('BENCH_ENV_A') }, 3971);
  const b = await startServer(
    [`${BUILD_B}/main.js`],
    { ...env, ...metricsPortB, DATABASE_URL: databaseB.url, ...envOf('BENCH_ENV_B') },
    3972,
    '/health',
    separate ? resolve(BUILD_B, '..') : undefined,
  );
  const baseline = await startBaseline(database.url, 3973);
  try {
    const body = JSON.stringify(BENCH_SUBMISSION);
    const createTarget = async (server: typeof a) => {
      const token = await loginAdmin(server);
      const configId = await createBenchForm(server.url, token);
      return {
        url: `${server.url}/api/data/${configId}`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        configId,
      };
    };
    const targetA = await createTarget(a);
    const targetB = await createTarget(b);
    // A side that answers errors fast would look fast: every answer must be a 2xx.
    const post = async (url: string, headers: Record<string, string>, seconds: number) => {
      const result = await load({
        url,
        method: 'POST',
        headers,
        body,
        connections: 16,
        durationSeconds: seconds,
      });
      if (result.non2xx || result.errors)
        throw new Error(`${url}: ${result.non2xx} answers not 2xx, ${result.errors} errors`);
      return result;
    };
    await post(targetA.url, targetA.headers, 3);
    await post(targetB.url, targetB.headers, 3);
    const sums = { base: 0, a: 0, b: 0, cpuA: 0, cpuB: 0, requestsA: 0, requestsB: 0 };
    // A side's process CPU over its turn: which of the two spends less per create, and how near it
    // runs to one core (its JavaScript runs on one thread).
    const timed = async (server: typeof a, target: typeof targetA) => {
      const before = cpuMsOf(server.process.pid!);
      const result = await post(target.url, target.headers, SECONDS);
      return { result, cpuMs: cpuMsOf(server.process.pid!) - before };
    };
    for (let turn = 0; turn < TURNS; turn++) {
      const base = await post(
        `${baseline.url}/create/${targetA.configId}`,
        { 'content-type': 'application/json' },
        SECONDS,
      );
      const turnA = await timed(a, targetA);
      const turnB = await timed(b, targetB);
      sums.base += base.requestsPerSecond;
      sums.a += turnA.result.requestsPerSecond;
      sums.b += turnB.result.requestsPerSecond;
      sums.cpuA += turnA.cpuMs;
      sums.cpuB += turnB.cpuMs;
      sums.requestsA += turnA.result.requests;
      sums.requestsB += turnB.result.requests;
    }
    const cpuPerCreate = (cpuMs: number, requests: number) => Number((cpuMs / requests).toFixed(3));
    console.log(
      JSON.stringify({
        figure: 'compare-builds',
        profile: PROFILE.name,
        builds: [BUILD_A, BUILD_B],
        envA: { ...envOf('BENCH_ENV_A'), ...(process.env.BENCH_POOLER_URL ? { pooler: true } : {}) },
        envB: envOf('BENCH_ENV_B'),
        separateDatabases: separate,
        turns: TURNS,
        ratioA: Number((sums.a / sums.base).toFixed(2)),
        ratioB: Number((sums.b / sums.base).toFixed(2)),
        reqPerSecA: Math.round(sums.a / TURNS),
        reqPerSecB: Math.round(sums.b / TURNS),
        baselineReqPerSec: Math.round(sums.base / TURNS),
        cpuMsPerCreateA: cpuPerCreate(sums.cpuA, sums.requestsA),
        cpuMsPerCreateB: cpuPerCreate(sums.cpuB, sums.requestsB),
        coresA: Number((sums.cpuA / (TURNS * SECONDS * 1000)).toFixed(2)),
        coresB: Number((sums.cpuB / (TURNS * SECONDS * 1000)).toFixed(2)),
      }),
    );
  } finally {
    await a.stop();
    await b.stop();
    await baseline.stop();
    await database.drop();
    if (separate) await databaseB.drop();
  }
}

/** `poolerUrl` naming the database of `url`. */
function withDatabaseOf(poolerUrl: string, url: string): string {
  const pooled = new URL(poolerUrl);
  pooled.pathname = new URL(url).pathname;
  return pooled.toString();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
