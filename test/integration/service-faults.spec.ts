import { request as httpRequest, type IncomingMessage } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ownPostgresServer } from '../utils/configurations';
import { startHttpServer, type HttpTestServer } from '../utils/http-test-server';
import { PostgresTestCluster } from '../utils/postgres-test-cluster';
import { startRedisTestServer, type RedisTestServer } from '../utils/redis-test-server';
import { startServiceProcess, type ServiceProcess } from '../utils/service-process';
import { TEST_ADMIN } from '../utils/test-app';
import { untilTrue } from '../utils/until';
import { saveThenPost } from '../utils/workflow-api';

/**
 * The real service, two instances in child processes on a PostgreSQL server of this suite's own: one
 * direct, one through PgBouncer in transaction mode (LISTEN direct), both on a Redis of their own,
 * running workflows against a partner that drops some connections. PostgreSQL is restarted (`-m
 * immediate`: every backend killed at once) and stopped at chosen moments and at random moments of
 * a mixed load; PgBouncer and Redis are restarted. Each case asserts that both processes live, that
 * they answer soon after the dependency's return (within a second on a quiet machine; the test allows
 * three), that no acknowledged write is lost and no
 * queued run is stuck. Before every pool client had an 'error' listener, the first restart with a
 * client checked out (the paused export of the first case) ended the process.
 */
ownPostgresServer('the service under dependency faults (direct and through PgBouncer)', () => {
  let cluster: PostgresTestCluster;
  let partner: HttpTestServer;
  let redis: RedisTestServer;
  const instances: Instance[] = [];
  let configId: string;
  let workflowId: string;
  let webhookId: string;
  /** Every record a 201 acknowledged, and every run a 202 queued. */
  const acknowledged: string[] = [];
  const queued: string[] = [];

  beforeAll(async () => {
    cluster = await PostgresTestCluster.create();
    await cluster.startPgBouncer();
    redis = await startRedisTestServer();
    partner = await startHttpServer();
    let calls = 0;
    partner.handle((_req, res) => {
      // One call in seven loses its connection: the api step retries it.
      if (++calls % 7 === 0) return void res.socket?.destroy();
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), 20);
    });
    const env = {
      DATA_DIR: mkdtempSync(join(tmpdir(), 'fdws-faults-')),
      REDIS_URL: redis.url,
      WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${partner.port}`,
      WORKFLOW_POLL_MS: '100',
      // Longer than any outage below on a slow machine (the longest is the server stopped for 10 s,
      // plus its restart): when a run's lease runs out during an outage, the instance that claims it
      // afterwards rightly ends its started api step INTERRUPTED (not replayable), which is the
      // lease's contract, not a fault. 8 s was once too short on a loaded CI machine.
      WORKFLOW_LEASE_MS: '20000',
      WEBHOOK_POLL_MS: '200',
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_LEASE_MS: '3000',
      LOG_LEVEL: 'info',
    };
    instances.push(
      await startInstance('direct', { ...env, DATABASE_URL: cluster.url() }),
      await startInstance('through PgBouncer', {
        ...env,
        DATABASE_URL: cluster.url('postgres', true),
        DATABASE_LISTEN_URL: cluster.url(),
      }),
    );
    const [first] = instances;
    const config = await first.call('POST', '/api/configs', {
      title: 'Faults',
      type: 'form',
      schema: {
        type: 'object',
        properties: { name: { type: 'string' }, note: { type: 'string' }, n: { type: 'integer' } },
      },
    });
    expect(config.status).toBe(201);
    configId = config.body.id;
    const workflow = await first.call('POST', '/api/workflow', {
      name: 'Save and tell',
      type: 'save',
      config: {
        retry: { enabled: true, maxAttempts: 10, backoff: 'fixed', delayMs: 200 },
        steps: saveThenPost(partner.url('/hook')),
      },
    });
    expect(workflow.status).toBe(201);
    workflowId = workflow.body.id;
    const webhook = await first.call('POST', '/api/webhooks', {
      url: partner.url('/webhook'),
      events: ['record.created'],
      configId,
    });
    expect(webhook.status).toBe(201);
    webhookId = webhook.body.id;
    // Large enough (about 6 MB of CSV) that an export whose reader pauses holds its COPY open.
    const note = 'x'.repeat(100_000);
    for (let i = 0; i < 60; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, async (_, j) => {
          const created = await instances[j % 2].call('POST', `/api/data/${configId}`, {
            name: `seed ${i + j}`,
            note,
            n: i + j,
          });
          expect(created.status).toBe(201);
          acknowledged.push(created.body.dataId);
        }),
      );
    }
  }, 120_000);

  afterAll(async () => {
    for (const instance of instances) await instance.process.kill();
    await partner?.close();
    await redis?.stop();
    await cluster?.destroy();
  });

  /** The load of the running case: stopped after it, whether it passed or not. */
  let running: Load | null = null;
  afterEach(async () => {
    await running?.stop();
    running = null;
    for (const instance of instances) {
      expect([instance.name, instance.process.alive]).toEqual([instance.name, true]);
      expect(instance.process.output()).not.toMatch(/UNHANDLED_(ERROR|REJECTION)/);
    }
  });

  it('a restart while an export streams to a paused reader, runs wait in the queue and LISTEN is open', async () => {
    const exports = instances.map((instance) => instance.pausedExport(configId));
    await Promise.all(exports.map((paused) => paused.started));
    for (let i = 0; i < 10; i++) queued.push(await instances[i % 2].queueRun(workflowId, configId, i));
    await cluster.restart('immediate');
    await expectAnswerSoon(instances);
    for (const paused of exports) paused.abandon();
    // A configuration retitled on one instance is seen on the other: LISTEN came back, and what was
    // kept in process while it was away was dropped.
    const [direct, pooled] = instances;
    expect((await pooled.call('GET', `/api/configs/${configId}`)).body.title).toBe('Faults');
    expect((await direct.call('PUT', `/api/configs/${configId}`, { title: 'Faults again' })).status).toBe(
      200,
    );
    await until(
      async () => (await pooled.call('GET', `/api/configs/${configId}`)).body.title === 'Faults again',
    );
    await expectRunsFinished(instances[0], queued);
    await expectDeliveriesSent(instances[0], webhookId);
  });

  it('stopped for 10 s under load: 503 meanwhile (never 401 or 500), then back, each change logged once', async () => {
    const marks = instances.map((instance) => instance.process.output().length);
    const load = (running = startLoad(instances, configId, workflowId, acknowledged, queued));
    await sleep(500);
    await cluster.stop('immediate');
    const [direct] = instances;
    const during = await direct.call('GET', `/api/data/${configId}?take=5`);
    expect([during.status, during.body.code]).toEqual([503, 'DATABASE_UNAVAILABLE']);
    await sleep(10_000);
    await cluster.start();
    await expectAnswerSoon(instances);
    await sleep(1500);
    const statuses = await load.stop();
    expect(statuses.unexpected).toEqual([]);
    expect(statuses.counts[503]).toBeGreaterThan(0);
    const logged = direct.process.output().slice(marks[0]);
    expect(logged.match(/Database is unavailable/g)).toHaveLength(1);
    expect(logged.match(/Database is back after/g)).toHaveLength(1);
    await expectRecordsReadable(instances, configId, acknowledged);
    await expectRunsFinished(direct, queued);
    await expectDeliveriesSent(direct, webhookId);
  }, 120_000);

  it('PgBouncer killed and started again, then Redis restarted empty, under load', async () => {
    const load = (running = startLoad(instances, configId, workflowId, acknowledged, queued));
    await sleep(500);
    await cluster.killPgBouncer();
    await sleep(1000);
    await cluster.startPgBouncer();
    await expectAnswerSoon(instances);
    await sleep(500);
    await redis.stop();
    await sleep(1000);
    await redis.start();
    await sleep(1500);
    const statuses = await load.stop();
    expect(statuses.unexpected).toEqual([]);
    await expectRecordsReadable(instances, configId, acknowledged);
    await expectRunsFinished(instances[0], queued);
    await expectDeliveriesSent(instances[0], webhookId);
  }, 120_000);

  it('twenty restarts at random moments of a mixed load: no exit, no lost write, no stuck run', async () => {
    const load = (running = startLoad(instances, configId, workflowId, acknowledged, queued));
    const recoveries: number[] = [];
    for (let restart = 0; restart < 20; restart++) {
      await sleep(200 + Math.floor(Math.random() * 1000));
      await cluster.restart('immediate');
      recoveries.push(await answeringAgain(instances));
    }
    await sleep(1000);
    const statuses = await load.stop();
    expect(statuses.unexpected).toEqual([]);
    expect(statuses.counts[201]).toBeGreaterThan(20);
    // Back after each restart; the second of the cases above is not asserted on a storm that keeps
    // both CPUs of a CI machine busy, only that nothing hangs.
    expect(Math.max(...recoveries)).toBeLessThan(5000);
    await expectRecordsReadable(instances, configId, acknowledged);
    await expectRunsFinished(instances[0], queued);
    await expectDeliveriesSent(instances[0], webhookId);
  }, 240_000);
});

interface Load {
  /** Stops the load (once all requests in flight are answered): what it saw. */
  stop(): Promise<{ counts: Record<number, number>; unexpected: string[] }>;
}

interface Answer {
  status: number;
  body: any;
}

interface Instance {
  name: string;
  process: ServiceProcess;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  queueRun(workflowId: string, configId: string, n: number): Promise<string>;
  /** A CSV export whose reader stops reading after the first chunk. */
  pausedExport(configId: string): { started: Promise<void>; abandon(): void };
}

async function startInstance(name: string, env: Record<string, string>): Promise<Instance> {
  const process = await startServiceProcess(env);
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    token?: string,
  ): Promise<Answer> => {
    const response = await fetch(`${process.url}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // CSV and other text bodies stay text.
    }
    return { status: response.status, body: parsed };
  };
  const login = await call('POST', '/auth/login', TEST_ADMIN);
  if (login.status !== 200) throw new Error(`login failed: ${JSON.stringify(login.body)}`);
  const token = login.body.token as string;
  const instance: Instance = {
    name,
    process,
    call: (method, path, body, headers) => call(method, path, body, headers, token),
    async queueRun(workflowId, configId, n) {
      const answer = await instance.call(
        'POST',
        `/api/workflow/${workflowId}/execute`,
        { configId, data: { name: `run ${n}`, n } },
        { prefer: 'respond-async' },
      );
      expect(answer.status).toBe(202);
      return answer.body.runId;
    },
    pausedExport(configId) {
      let response: IncomingMessage | null = null;
      const request = httpRequest(`${process.url}/api/data/${configId}/export?format=csv`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const started = new Promise<void>((resolve, reject) => {
        request.on('response', (answer) => {
          response = answer;
          answer.once('data', () => {
            answer.pause();
            resolve();
          });
          answer.on('error', () => undefined);
        });
        request.on('error', reject);
      });
      request.end();
      return {
        started,
        abandon: () => {
          response?.destroy();
          request.destroy();
        },
      };
    },
  };
  return instance;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const until = (condition: () => Promise<boolean>, timeoutMs = 30_000) =>
  untilTrue(condition, 'the condition', { timeoutMs });

/**
 * From now (the dependency is back), the milliseconds until every instance answers again; fails past
 * 3 s. A quiet machine measures well under a second; CI runs two jest runs side by side on 2 CPUs
 * with this suite's load on top, and once measured 1.3 s there. Three seconds still tells "back on
 * the next check" from "waits for a reconnect timer or a restart" (those take 5 s or more).
 */
async function expectAnswerSoon(instances: Instance[]): Promise<number> {
  const took = await answeringAgain(instances);
  expect(took).toBeLessThan(3000);
  return took;
}

/**
 * From now, the milliseconds until every instance's readiness probe and an authenticated read
 * answer 200 (the slowest instance's); fails past 5 s.
 */
async function answeringAgain(instances: Instance[]): Promise<number> {
  const back = Date.now();
  const answering = async (instance: Instance) => {
    for (;;) {
      const ready = await fetch(`${instance.process.url}/health/ready`).then((r) => r.status);
      const read = ready === 200 ? (await instance.call('GET', '/api/auth/me')).status : 0;
      if (read === 200) return;
      if (Date.now() - back > 5000)
        throw new Error(`${instance.name} not back: ready ${ready}, read ${read}`);
      await sleep(20);
    }
  };
  await Promise.all(instances.map(answering));
  return Date.now() - back;
}

async function expectRecordsReadable(instances: Instance[], configId: string, ids: string[]): Promise<void> {
  for (const [index, id] of ids.entries()) {
    const read = await instances[index % 2].call('GET', `/api/data/${configId}/${id}`);
    expect([id, read.status]).toEqual([id, 200]);
  }
}

/**
 * No run is left queued, running or waiting, none failed (the api step retries what the faults
 * broke), and a sample of the queued runs read `success` one by one.
 */
async function expectRunsFinished(instance: Instance, runIds: string[]): Promise<void> {
  const count = async (status: string) =>
    (await instance.call('GET', `/api/workflow/runs?status=${status}&limit=100`)).body.data.length as number;
  const statusOf = async (runId: string) =>
    (await instance.call('GET', `/api/workflow/runs/${runId}`)).body.status as string;
  const sample = runIds.filter((_, index) => index % Math.ceil(runIds.length / 20) === 0);
  let left: Record<string, number | string[]> = {};
  await until(async () => {
    left = {
      queued: await count('queued'),
      running: await count('running'),
      waiting: await count('waiting'),
    };
    if (left.queued !== 0 || left.running !== 0 || left.waiting !== 0) return false;
    // The counts are separate reads, and a run can move between them (a retry puts a running run
    // back in the queue after the queued count was read): the sampled runs must have ended too.
    const active = [];
    for (const runId of sample) {
      if (['queued', 'running', 'waiting'].includes(await statusOf(runId))) active.push(runId);
    }
    left.sampledStillActive = active;
    return active.length === 0;
  }, 90_000).catch(() => {
    throw new Error(`runs stuck: ${JSON.stringify(left)}`);
  });
  const failed = (await instance.call('GET', '/api/workflow/runs?status=failed&limit=5')).body.data;
  expect(JSON.stringify(failed)).toBe('[]');
  for (const runId of sample) expect([runId, await statusOf(runId)]).toEqual([runId, 'success']);
}

/** Every webhook delivery (one per record created) is sent in the end: none pending, none failed. */
async function expectDeliveriesSent(instance: Instance, webhookId: string): Promise<void> {
  const unsent = async () => {
    const states: Record<string, number> = {};
    for (let page = 1; ; page++) {
      const deliveries = (
        await instance.call('GET', `/api/webhooks/${webhookId}/deliveries?page=${page}&limit=100`)
      ).body.data as { state: string }[];
      for (const { state } of deliveries) states[state] = (states[state] ?? 0) + 1;
      if (deliveries.length < 100) return states;
    }
  };
  let states: Record<string, number> = {};
  await until(async () => {
    states = await unsent();
    return !states.pending;
  }, 90_000).catch(() => {
    throw new Error(`deliveries stuck: ${JSON.stringify(states)}`);
  });
  expect(states.failed).toBeUndefined();
  expect(states.sent).toBeGreaterThan(0);
}

/**
 * Writers, grid and list reads, CSV exports, queued runs and history reads on both instances until
 * stopped. A request may meet the outage (503) or lose its connection mid-stream; any other status
 * is unexpected. Acknowledged records and queued runs are kept for the checks that follow.
 */
function startLoad(
  instances: Instance[],
  configId: string,
  workflowId: string,
  acknowledged: string[],
  queued: string[],
): Load {
  let going = true;
  const counts: Record<number, number> = {};
  const unexpected: string[] = [];
  // 429: the user's queue of runs is full (WORKFLOW_MAX_QUEUED_PER_USER) while the faults slow it down.
  const expected = new Set([200, 201, 202, 429, 503]);
  let n = 0;
  const kinds: ((instance: Instance) => Promise<Answer>)[] = [
    async (instance) => {
      const created = await instance.call('POST', `/api/data/${configId}`, { name: `load ${++n}`, n });
      if (created.status === 201) acknowledged.push(created.body.dataId);
      return created;
    },
    (instance) => instance.call('GET', `/api/data/${configId}?skip=0&take=20&requireTotalCount=true`),
    (instance) => instance.call('GET', `/api/data/${configId}/export?format=csv&filters={"n":1}`),
    async (instance) => {
      const answer = await instance.call(
        'POST',
        `/api/workflow/${workflowId}/execute`,
        { configId, data: { name: `load run ${++n}`, n } },
        { prefer: 'respond-async' },
      );
      if (answer.status === 202) queued.push(answer.body.runId);
      return answer;
    },
    (instance) =>
      instance.call('GET', `/api/data/${configId}/${acknowledged[n % acknowledged.length]}/history`),
  ];
  const loops = instances.flatMap((instance) =>
    kinds.map(async (kind) => {
      while (going) {
        try {
          const answer = await kind(instance);
          counts[answer.status] = (counts[answer.status] ?? 0) + 1;
          if (!expected.has(answer.status))
            unexpected.push(
              `${instance.name}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`,
            );
          // A client backs off after a 503 or 429, as Retry-After asks.
          await sleep(answer.status === 503 || answer.status === 429 ? 100 : 50);
        } catch {
          // The connection was cut mid-answer (a stream the outage ended): not an answer.
          await sleep(100);
        }
      }
    }),
  );
  return {
    async stop() {
      going = false;
      await Promise.all(loops);
      return { counts, unexpected };
    },
  };
}
