// Server CPU time per workflow run: `POST /api/workflow/:id/execute` of the benchmark workflow
// (validate -> save -> transform -> api to a loopback receiver), measured as `cpu-per-create.ts`
// measures a create: user + system time of the server process over N runs after a warm-up, which
// contention on a shared machine barely moves, unlike req/s. Also the CPU time of the PostgreSQL
// backends serving the service (its pool) per run. Then the same for the hand-written run of the
// write suite's baseline (bench/baseline-workflow.ts) on the same database and receiver, so the two
// CPU costs stand side by side. Compare commits with
// `npm run build && node -r @swc-node/register bench/cpu-per-run.ts` in each.
import { createBenchDatabase } from './lib/bench-database';
import { load } from './lib/load';
import { cpuPerRequest } from './lib/cpu-per-request';
import { type RunningServer } from './lib/processes';
import { loginAdmin, startBaseline, startService } from './lib/servers';
import { BENCH_SUBMISSION, createBenchForm } from './suites/form-fixture';
import { createWorkflow, startReceiver } from './suites/workflow-fixture';

const REQUESTS = Number(process.env.BENCH_CPU_REQUESTS ?? 5_000);
const WARM_UP = Number(process.env.BENCH_CPU_WARM_UP ?? 1_000);
// Apart from the ports of `npm run bench` and cpu-per-create, so they can run side by side.
const SERVICE_PORT = Number(process.env.BENCH_CPU_RUN_PORT ?? 3961);
const RECEIVER_PORT = SERVICE_PORT + 1;

const measured = (server: RunningServer, databaseUrl: string, request: Parameters<typeof load>[0]) =>
  cpuPerRequest(server, databaseUrl, request, REQUESTS);

async function main(): Promise<void> {
  let baseline: RunningServer | undefined;
  const database = await createBenchDatabase();
  const receiver = await startReceiver(RECEIVER_PORT);
  const service = await startService(database.url, SERVICE_PORT, {
    WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${RECEIVER_PORT}`,
  });
  try {
    const token = await loginAdmin(service);
    const configId = await createBenchForm(service.url, token);
    const workflowId = await createWorkflow(service.url, token, configId, RECEIVER_PORT);
    const request = {
      url: `${service.url}/api/workflow/${workflowId}/execute`,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ configId, data: BENCH_SUBMISSION }),
      connections: 16,
    };
    await load({ ...request, amount: WARM_UP });
    let receiverConnections = 0;
    receiver.on('connection', () => receiverConnections++);
    const ours = await measured(service, database.url, request);
    console.log(JSON.stringify({ figure: 'cpu-per-run', ...ours, receiverConnections }));
    // The hand-written run, measured the same way once the service is idle.
    baseline = await startBaseline(database.url, SERVICE_PORT + 2);
    const byHand = {
      url: `${baseline.url}/workflow/${configId}?receiver=${encodeURIComponent(`http://127.0.0.1:${RECEIVER_PORT}/orders`)}`,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json' },
      body: request.body,
      connections: 16,
    };
    await load({ ...byHand, amount: WARM_UP });
    console.log(
      JSON.stringify({ figure: 'cpu-per-run-by-hand', ...(await measured(baseline, database.url, byHand)) }),
    );
  } finally {
    await baseline?.stop();
    await service.stop();
    await database.drop();
    receiver.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
