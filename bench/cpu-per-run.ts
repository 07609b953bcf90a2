// Server CPU time per workflow run: `POST /api/workflow/:id/execute` of the benchmark workflow
// (validate -> save -> transform -> api to a loopback receiver), measured as `cpu-per-create.ts`
// measures a create: user + system time of the server process over N runs after a warm-up, which
// contention on a shared machine barely moves, unlike req/s. Also the CPU time of the PostgreSQL
// backends serving the service (its pool) per run. Compare commits with
// `npm run build && node -r @swc-node/register bench/cpu-per-run.ts` in each.
import { createBenchDatabase } from './lib/bench-database';
import { load } from './lib/load';
import { cpuMsOf, databaseBackendsCpuMs } from './lib/process-cpu';
import { loginAdmin, startService } from './lib/servers';
import { BENCH_SUBMISSION, createBenchForm } from './suites/form-fixture';
import { createWorkflow, startReceiver } from './suites/workflow-fixture';

const REQUESTS = Number(process.env.BENCH_CPU_REQUESTS ?? 5_000);
const WARM_UP = Number(process.env.BENCH_CPU_WARM_UP ?? 1_000);
// Apart from the ports of `npm run bench` and cpu-per-create, so they can run side by side.
const SERVICE_PORT = Number(process.env.BENCH_CPU_RUN_PORT ?? 3961);
const RECEIVER_PORT = SERVICE_PORT + 1;

async function main(): Promise<void> {
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
    const before = cpuMsOf(service.process.pid!);
    const databaseBefore = await databaseBackendsCpuMs(database.url);
    const result = await load({ ...request, amount: REQUESTS });
    const cpuMs = cpuMsOf(service.process.pid!) - before;
    const databaseAfter = await databaseBackendsCpuMs(database.url);
    console.log(
      JSON.stringify({
        figure: 'cpu-per-run',
        requests: REQUESTS,
        non2xx: result.non2xx,
        reqPerSec: result.requestsPerSecond,
        // New TCP connections the api step opened to the receiver (keep-alive reuses them).
        receiverConnections,
        cpuMsPerRequest: Number((cpuMs / REQUESTS).toFixed(3)),
        databaseCpuMsPerRequest:
          databaseBefore === null || databaseAfter === null
            ? null
            : Number(((databaseAfter - databaseBefore) / REQUESTS).toFixed(3)),
      }),
    );
  } finally {
    await service.stop();
    await database.drop();
    receiver.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
