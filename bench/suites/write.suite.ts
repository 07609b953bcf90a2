import { createBenchDatabase } from '../lib/bench-database';
import { load, report } from '../lib/load';
import { loginAdmin, startBaseline, startService } from '../lib/servers';
import { BENCH_FORM, BENCH_SUBMISSION } from './form-fixture';

const DURATION = Number(process.env.BENCH_DURATION_S ?? 10);

async function createForm(serviceUrl: string, token: string): Promise<string> {
  const response = await fetch(`${serviceUrl}/api/configs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(BENCH_FORM),
  });
  if (response.status !== 201)
    throw new Error(`config create failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

/** `create` on PostgreSQL against the baseline insert, and `embedded` (create on PGlite). */
export async function runWriteBenchmarks(): Promise<void> {
  const database = await createBenchDatabase();
  const service = await startService(database.url, 3931);
  const baseline = await startBaseline(database.url, 3932);
  try {
    const token = await loginAdmin(service);
    const configId = await createForm(service.url, token);
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
  } finally {
    await service.stop();
    await baseline.stop();
    await database.drop();
  }

  const embedded = await startService(null, 3933);
  try {
    const token = await loginAdmin(embedded);
    const configId = await createForm(embedded.url, token);
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
