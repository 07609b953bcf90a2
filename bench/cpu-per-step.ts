// What each step of the benchmark workflow adds to a run: server CPU (user and system time of the
// service process) and PostgreSQL backend CPU per request, for a plain create and for workflows made
// of the benchmark's steps (validate -> save -> transform -> api to a loopback receiver) cut after
// each step, all on one service and database, one after the other. Like cpu-per-run.ts, CPU time per
// request, which a loaded machine moves far less than req/s; and the cores each process kept busy
// during the load (which one was the limit):
// `npm run build && node -r @swc-node/register bench/cpu-per-step.ts`.
// BENCH_STEP_VARIANTS: `;`-separated variants, each `create` or a `,`-separated list of step names.
import { readFileSync } from 'node:fs';
import { createBenchDatabase } from './lib/bench-database';
import { load } from './lib/load';
import { databaseBackendsCpuMs } from './lib/process-cpu';
import { loginAdmin, startService } from './lib/servers';
import { BENCH_SUBMISSION, createBenchForm } from './suites/form-fixture';
import { benchWorkflowSteps, startReceiver } from './suites/workflow-fixture';

const REQUESTS = Number(process.env.BENCH_CPU_REQUESTS ?? 3_000);
const WARM_UP = Number(process.env.BENCH_CPU_WARM_UP ?? 1_000);
const VARIANTS = (
  process.env.BENCH_STEP_VARIANTS ?? 'create;check;store;check,store,shape;check,store,shape,forward'
).split(';');
// Apart from the ports of `npm run bench`, cpu-per-create and cpu-per-run.
const SERVICE_PORT = Number(process.env.BENCH_CPU_STEP_PORT ?? 3981);
const RECEIVER_PORT = SERVICE_PORT + 1;

/** User and system CPU time of a process so far, in ms (/proc/<pid>/stat, 100 ticks per second). */
function userAndSystemMs(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

async function main(): Promise<void> {
  const database = await createBenchDatabase();
  const receiver = await startReceiver(RECEIVER_PORT);
  const service = await startService(database.url, SERVICE_PORT, {
    WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${RECEIVER_PORT}`,
  });
  try {
    const token = await loginAdmin(service);
    const configId = await createBenchForm(service.url, token);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const steps = new Map(benchWorkflowSteps(configId, RECEIVER_PORT).map((step) => [step.name, step]));
    for (const variant of VARIANTS) {
      let url = `${service.url}/api/data/${configId}`;
      let body = JSON.stringify(BENCH_SUBMISSION);
      if (variant !== 'create') {
        const created = await fetch(`${service.url}/api/workflow`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            name: `steps ${variant}`,
            type: 'save',
            config: { steps: variant.split(',').map((name) => steps.get(name)) },
          }),
        });
        if (created.status !== 201) throw new Error(`workflow ${variant}: ${created.status}`);
        url = `${service.url}/api/workflow/${((await created.json()) as { id: string }).id}/execute`;
        body = JSON.stringify({ configId, data: BENCH_SUBMISSION });
      }
      const request = { url, method: 'POST' as const, headers, body, connections: 16 };
      await load({ ...request, amount: WARM_UP });
      const before = userAndSystemMs(service.process.pid!);
      const databaseBefore = await databaseBackendsCpuMs(database.url);
      const benchBefore = process.cpuUsage();
      const result = await load({ ...request, amount: REQUESTS });
      const wallMs = result.elapsedMs;
      const bench = process.cpuUsage(benchBefore);
      const after = userAndSystemMs(service.process.pid!);
      const databaseAfter = await databaseBackendsCpuMs(database.url);
      const perRequest = (ms: number) => Number((ms / REQUESTS).toFixed(3));
      // Cores busy on average during the load: which of the service, PostgreSQL and this process
      // (autocannon and the receiver) was the limit.
      const cores = (ms: number) => Number((ms / wallMs).toFixed(2));
      console.log(
        JSON.stringify({
          figure: 'cpu-per-step',
          variant,
          requests: REQUESTS,
          non2xx: result.non2xx,
          reqPerSec: Math.round((REQUESTS * 1000) / wallMs),
          p50Ms: result.p50,
          userMsPerRequest: perRequest(after.user - before.user),
          systemMsPerRequest: perRequest(after.system - before.system),
          databaseCpuMsPerRequest:
            databaseBefore === null || databaseAfter === null
              ? null
              : perRequest(databaseAfter - databaseBefore),
          serviceCores: cores(after.user - before.user + after.system - before.system),
          databaseCores:
            databaseBefore === null || databaseAfter === null ? null : cores(databaseAfter - databaseBefore),
          benchCores: cores((bench.user + bench.system) / 1000),
        }),
      );
    }
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
