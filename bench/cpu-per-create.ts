// Server CPU time per `POST /api/data/:id` (user + system time of the server process divided by the
// requests), a figure that contention on a shared machine barely moves, unlike req/s. Used to compare
// two commits: `node -r @swc-node/register bench/cpu-per-create.ts` after `npm run build` in each.
// Then the same for the bare insert (bench/baseline-server.ts) on the same database, so the two
// costs stand side by side, the database's part included.
import { createBenchDatabase } from './lib/bench-database';
import { Client } from 'pg';
import { load } from './lib/load';
import { PROFILES } from './lib/profiles';
import { cpuPerRequest } from './lib/cpu-per-request';
import { type RunningServer } from './lib/processes';
import { loginAdmin, startBaseline, startService } from './lib/servers';
import { BENCH_SUBMISSION, createBenchForm } from './suites/form-fixture';

const REQUESTS = Number(process.env.BENCH_CPU_REQUESTS ?? 10_000);
const PROFILE = PROFILES.find((p) => p.name === (process.env.BENCH_PROFILE ?? 'defaults')) ?? PROFILES[0];

/** Transactions committed in the database so far: one per autocommitted statement. */
async function commitsOf(url: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query(
      'select xact_commit from pg_stat_database where datname = current_database()',
    );
    return Number(result.rows[0].xact_commit);
  } finally {
    await client.end();
  }
}

const SERVICE_PORT = Number(process.env.BENCH_CPU_CREATE_PORT ?? 3941);

async function main(): Promise<void> {
  let baseline: RunningServer | undefined;
  const database = await createBenchDatabase();
  const service = await startService(database.url, SERVICE_PORT, PROFILE.env);
  try {
    const token = await loginAdmin(service);
    const configId = await createBenchForm(service.url, token);
    const request = {
      url: `${service.url}/api/data/${configId}`,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(BENCH_SUBMISSION),
      connections: 16,
    };
    await load({ ...request, amount: 2000 });
    // pg_stat_database is updated when a backend reports; give the warm-up's reports time to land.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const commitsBefore = await commitsOf(database.url);
    const ours = await cpuPerRequest(service, database.url, request, REQUESTS);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const commits = (await commitsOf(database.url)) - commitsBefore;
    console.log(
      JSON.stringify({
        figure: 'cpu-per-create',
        profile: PROFILE.name,
        transactionsPerRequest: Number((commits / REQUESTS).toFixed(2)),
        ...ours,
      }),
    );
    // The bare insert, measured the same way once the service is idle.
    baseline = await startBaseline(database.url, SERVICE_PORT + 1);
    const byHand = {
      ...request,
      url: `${baseline.url}/create/${configId}`,
      headers: { 'content-type': 'application/json' },
    };
    await load({ ...byHand, amount: 2000 });
    console.log(
      JSON.stringify({
        figure: 'cpu-per-create-by-hand',
        ...(await cpuPerRequest(baseline, database.url, byHand, REQUESTS)),
      }),
    );
  } finally {
    await baseline?.stop();
    await service.stop();
    await database.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
