import { createBenchDatabase } from '../lib/bench-database';
import { load, report, type LoadResult } from '../lib/load';
import { selectedProfiles, type SettingsProfile } from '../lib/profiles';
import { loginAdmin, startBaseline, startService } from '../lib/servers';
import { BENCH_SUBMISSION, createBenchForm } from './form-fixture';
import { createWorkflow, RECEIVER_PORT, startReceiver } from './workflow-fixture';

const DURATION = Number(process.env.BENCH_DURATION_S ?? 10);
const EMBEDDED_LOAD_SECONDS = Number(process.env.BENCH_EMBEDDED_LOAD_S ?? 60);

/** 16 connections POSTing one body for DURATION seconds. */
function post(url: string, headers: Record<string, string>, body: string) {
  return load({ url, method: 'POST', headers, body, connections: 16, durationSeconds: DURATION });
}

/**
 * `create` on PostgreSQL against the baseline insert (alternating, two turns each), then `workflow`
 * (validate -> save -> transform -> api to a loopback server) against the same four steps written by
 * hand (bench/baseline-workflow.ts, the run persisted too), alternating the same way.
 */
async function postgresFigures(profile: SettingsProfile): Promise<void> {
  const database = await createBenchDatabase();
  const receiver = await startReceiver();
  const service = await startService(database.url, 3931, {
    ...profile.env,
    WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${RECEIVER_PORT}`,
  });
  const baseline = await startBaseline(database.url, 3932);
  try {
    const token = await loginAdmin(service);
    const configId = await createBenchForm(service.url, token);
    const body = JSON.stringify(BENCH_SUBMISSION);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const createUrl = `${service.url}/api/data/${configId}`;
    const baseUrl = `${baseline.url}/create/${configId}`;
    await load({ url: createUrl, method: 'POST', headers, body, connections: 16, durationSeconds: 2 });
    await load({
      url: baseUrl,
      method: 'POST',
      headers: JSON_HEADERS,
      body,
      connections: 16,
      durationSeconds: 2,
    });
    const turns = { ours: [] as LoadResult[], base: [] as LoadResult[] };
    for (let turn = 0; turn < 2; turn++) {
      turns.base.push(await post(baseUrl, JSON_HEADERS, body));
      turns.ours.push(await post(createUrl, headers, body));
    }
    const ours = combine(turns.ours);
    const base = combine(turns.base);
    const ratio = ours.requestsPerSecond / base.requestsPerSecond;
    report({
      figure: 'create',
      profile: profile.name,
      reqPerSec: ours.requestsPerSecond,
      p50Ms: ours.p50,
      p99Ms: ours.p99,
      non2xx: ours.non2xx,
      baselineReqPerSec: base.requestsPerSecond,
      // The bare insert's own tail at the same load: what this machine gives any server.
      baselineP99Ms: base.p99,
      ratio: Number(ratio.toFixed(2)),
      target: '>= 0.5 x baseline req/s and p99 <= 50 ms',
      pass: ratio >= 0.5 && ours.p99 <= 50 && ours.non2xx === 0,
    });

    const workflowId = await createWorkflow(service.url, token, configId);
    const executeUrl = `${service.url}/api/workflow/${workflowId}/execute`;
    const executeBody = JSON.stringify({ configId, data: BENCH_SUBMISSION });
    const baseWorkflowUrl = `${baseline.url}/workflow/${configId}?receiver=${encodeURIComponent(
      `http://127.0.0.1:${RECEIVER_PORT}/orders`,
    )}`;
    // Warmed up like the create figure (2 s): the first runs compile the definition, open the api
    // step's kept-alive connections and bring the engine's code to the optimising compiler.
    await load({
      url: executeUrl,
      method: 'POST',
      headers,
      body: executeBody,
      connections: 16,
      durationSeconds: 2,
    });
    await load({
      url: baseWorkflowUrl,
      method: 'POST',
      headers: JSON_HEADERS,
      body: executeBody,
      connections: 16,
      durationSeconds: 2,
    });
    const runs = { ours: [] as LoadResult[], base: [] as LoadResult[] };
    for (let turn = 0; turn < 2; turn++) {
      runs.base.push(await post(baseWorkflowUrl, JSON_HEADERS, executeBody));
      runs.ours.push(await post(executeUrl, headers, executeBody));
    }
    const run = combine(runs.ours);
    const baseRun = combine(runs.base);
    const workflowRatio = run.requestsPerSecond / baseRun.requestsPerSecond;
    report({
      figure: 'workflow',
      profile: profile.name,
      reqPerSec: run.requestsPerSecond,
      p50Ms: run.p50,
      p99Ms: run.p99,
      non2xx: run.non2xx,
      baselineReqPerSec: baseRun.requestsPerSecond,
      baselineP99Ms: baseRun.p99,
      ratio: Number(workflowRatio.toFixed(2)),
      // Informative: the run against the create figure (the earlier target, 0.4).
      ofCreate: Number((run.requestsPerSecond / ours.requestsPerSecond).toFixed(2)),
      target: '>= 0.5 x the hand-written workflow runs/s and p99 <= 100 ms',
      pass: workflowRatio >= 0.5 && run.p99 <= 100 && run.non2xx === 0 && baseRun.non2xx === 0,
    });
  } finally {
    await service.stop();
    await baseline.stop();
    await database.drop();
    receiver.close();
  }
}

/**
 * `embedded`: create on PGlite (a new, empty DATA_DIR under the project), no baseline: an absolute
 * target. Then `embedded-memory`: resident memory at the first `/health` and after
 * BENCH_EMBEDDED_LOAD_S (60) seconds of creates.
 */
async function embeddedFigure(profile: SettingsProfile): Promise<void> {
  const embedded = await startService(null, 3933, profile.env);
  const firstHealthMb = embedded.rssMb();
  try {
    const token = await loginAdmin(embedded);
    const configId = await createBenchForm(embedded.url, token);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const url = `${embedded.url}/api/data/${configId}`;
    const body = JSON.stringify(BENCH_SUBMISSION);
    await load({ url, method: 'POST', headers, body, connections: 16, durationSeconds: 2 });
    const ours = await post(url, headers, body);
    report({
      figure: 'embedded',
      profile: profile.name,
      reqPerSec: ours.requestsPerSecond,
      p50Ms: ours.p50,
      p99Ms: ours.p99,
      non2xx: ours.non2xx,
      target: '>= 300 req/s and p99 <= 100 ms',
      pass: ours.requestsPerSecond >= 300 && ours.p99 <= 100 && ours.non2xx === 0,
    });
    const loaded = await load({
      url,
      method: 'POST',
      headers,
      body,
      connections: 16,
      durationSeconds: EMBEDDED_LOAD_SECONDS,
    });
    const afterLoadMb = embedded.rssMb();
    report({
      figure: 'embedded-memory',
      profile: profile.name,
      firstHealthMb,
      afterLoadMb,
      loadSeconds: EMBEDDED_LOAD_SECONDS,
      creates: loaded.requests,
      target: `<= 260 MB at the first /health (empty data directory), <= 320 MB after ${EMBEDDED_LOAD_SECONDS} s of creates`,
      pass: firstHealthMb <= 260 && afterLoadMb <= 320 && loaded.non2xx === 0,
    });
  } finally {
    await embedded.stop();
  }
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/** Turns of one load as one figure: mean throughput, mean p50, worst p99. */
function combine(results: LoadResult[]): LoadResult {
  const mean = (pick: (r: LoadResult) => number) =>
    Math.round(results.reduce((sum, r) => sum + pick(r), 0) / results.length);
  return {
    requestsPerSecond: mean((r) => r.requestsPerSecond),
    requests: results.reduce((sum, r) => sum + r.requests, 0),
    p50: mean((r) => r.p50),
    p99: Math.max(...results.map((r) => r.p99)),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    elapsedMs: results.reduce((sum, r) => sum + r.elapsedMs, 0),
  };
}

/** create and workflow on PostgreSQL, then embedded, for each settings profile. */
export async function runWriteBenchmarks(): Promise<void> {
  for (const profile of selectedProfiles()) {
    await postgresFigures(profile);
    await embeddedFigure(profile);
  }
}
