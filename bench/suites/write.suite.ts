import { createBenchDatabase } from '../lib/bench-database';
import { load, report } from '../lib/load';
import { loginAdmin, startBaseline, startService } from '../lib/servers';
import { BENCH_SUBMISSION, createBenchForm } from './form-fixture';
import { createWorkflow, RECEIVER_PORT, startReceiver } from './workflow-fixture';

const DURATION = Number(process.env.BENCH_DURATION_S ?? 10);

/**
 * `create` on PostgreSQL against the baseline insert, `workflow` (validate -> save -> transform ->
 * api to a loopback server) against that create figure, and `embedded` (create on PGlite).
 */
export async function runWriteBenchmarks(): Promise<void> {
  const database = await createBenchDatabase();
  const receiver = await startReceiver();
  const service = await startService(database.url, 3931, {
    WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${RECEIVER_PORT}`,
  });
  const baseline = await startBaseline(database.url, 3932);
  try {
    const token = await loginAdmin(service);
    const configId = await createBenchForm(service.url, token);
    const body = JSON.stringify(BENCH_SUBMISSION);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    await load({
      url: `${service.url}/api/data/${configId}`,
      method: 'POST',
      headers,
      body,
      connections: 16,
      durationSeconds: 2,
    });
    const base = await load({
      url: `${baseline.url}/create/${configId}`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      connections: 16,
      durationSeconds: DURATION,
    });
    const ours = await load({
      url: `${service.url}/api/data/${configId}`,
      method: 'POST',
      headers,
      body,
      connections: 16,
      durationSeconds: DURATION,
    });
    const ratio = ours.requestsPerSecond / base.requestsPerSecond;
    report({
      figure: 'create',
      reqPerSec: ours.requestsPerSecond,
      p50Ms: ours.p50,
      p99Ms: ours.p99,
      non2xx: ours.non2xx,
      baselineReqPerSec: base.requestsPerSecond,
      ratio: Number(ratio.toFixed(2)),
      target: '>= 0.5 x baseline req/s and p99 <= 50 ms',
      pass: ratio >= 0.5 && ours.p99 <= 50 && ours.non2xx === 0,
    });

    const workflowId = await createWorkflow(service.url, token, configId);
    const run = await load({
      url: `${service.url}/api/workflow/${workflowId}/execute`,
      method: 'POST',
      headers,
      body: JSON.stringify({ configId, data: BENCH_SUBMISSION }),
      connections: 16,
      durationSeconds: DURATION,
    });
    const workflowRatio = run.requestsPerSecond / ours.requestsPerSecond;
    report({
      figure: 'workflow',
      reqPerSec: run.requestsPerSecond,
      p50Ms: run.p50,
      p99Ms: run.p99,
      non2xx: run.non2xx,
      createReqPerSec: ours.requestsPerSecond,
      ratio: Number(workflowRatio.toFixed(2)),
      target: '>= 0.4 x the create figure req/s',
      pass: workflowRatio >= 0.4 && run.non2xx === 0,
    });
  } finally {
    await service.stop();
    await baseline.stop();
    await database.drop();
    receiver.close();
  }

  const embedded = await startService(null, 3933);
  try {
    const token = await loginAdmin(embedded);
    const configId = await createBenchForm(embedded.url, token);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const ours = await load({
      url: `${embedded.url}/api/data/${configId}`,
      method: 'POST',
      headers,
      body: JSON.stringify(BENCH_SUBMISSION),
      connections: 16,
      durationSeconds: DURATION,
    });
    report({
      figure: 'embedded',
      reqPerSec: ours.requestsPerSecond,
      p50Ms: ours.p50,
      p99Ms: ours.p99,
      non2xx: ours.non2xx,
      target: '>= 300 req/s',
      pass: ours.requestsPerSecond >= 300 && ours.non2xx === 0,
    });
  } finally {
    await embedded.stop();
  }
}
