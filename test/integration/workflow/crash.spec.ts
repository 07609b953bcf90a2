import { startHttpServer, type HttpTestServer } from '../../utils/http-test-server';
import {
  processStore,
  startServiceProcess,
  type ProcessStore,
  type ServiceProcess,
} from '../../utils/service-process';
import { until } from '../../utils/until';
import { saveThenPost } from '../../utils/workflow-api';

const ADMIN = { email: 'crash-admin@example.com', password: 'crash-admin-password' };

/** The real service in a child process, on the store's PGlite directory or PostgreSQL database. */
function startServer(target: ProcessStore, allowed: string): Promise<ServiceProcess> {
  return startServiceProcess({
    ...target.env,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    THROTTLE_LIMIT: '100000',
    THROTTLE_AUTH_LIMIT: '100000',
    WORKFLOW_API_ALLOWED_HOSTS: allowed,
    WORKFLOW_POLL_MS: '100',
    // A run of a killed PostgreSQL instance is taken over once its lease ends.
    WORKFLOW_LEASE_MS: '2000',
  });
}

async function call(
  server: ServiceProcess,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  mode: 'async' | 'sync' = 'async',
): Promise<any> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(mode === 'async' ? { prefer: 'respond-async' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

describe('durable workflow runs survive kill -9', () => {
  let receiver: HttpTestServer;
  const stores: ProcessStore[] = [];
  const servers: ServiceProcess[] = [];
  beforeAll(async () => {
    receiver = await startHttpServer();
  });
  afterEach(async () => {
    for (const server of servers) await server.kill();
  });
  afterAll(async () => {
    await receiver.close();
    for (const store of stores) await store.close();
  });

  async function target() {
    const store = await processStore('fdws-crash-');
    stores.push(store);
    return store;
  }

  async function start(where: ProcessStore) {
    const server = await startServer(where, `127.0.0.1:${receiver.port}`);
    servers.push(server);
    const login = await call(server, 'POST', '/auth/login', undefined, ADMIN);
    return { server, token: login.body.token as string };
  }

  /** The first instance on `where`, and the form its runs save to. */
  async function startWithForm(where: ProcessStore) {
    const first = await start(where);
    const config = await call(first.server, 'POST', '/api/configs', first.token, {
      title: 'Crash',
      type: 'form',
    });
    return { ...first, configId: config.body.id as string };
  }

  /** Creates a workflow on an instance (201) and returns its id. */
  async function createWorkflowOn(
    instance: { server: ServiceProcess; token: string },
    name: string,
    type: string,
    config: Record<string, unknown>,
  ): Promise<string> {
    const created = await call(instance.server, 'POST', '/api/workflow', instance.token, {
      name,
      type,
      config,
    });
    expect(created.status).toBe(201);
    return created.body.id;
  }

  /** Runs a workflow on an instance: queued (`async`, the default), or inside the request (`sync`). */
  const executeOn = (
    instance: { server: ServiceProcess; token: string },
    workflowId: string,
    configId: string,
    data: Record<string, unknown>,
    mode?: 'async' | 'sync',
  ) =>
    call(
      instance.server,
      'POST',
      `/api/workflow/${workflowId}/execute`,
      instance.token,
      { configId, data },
      mode,
    );

  /** A fresh target whose receiver never answers (the api step is in flight when the process dies), and its first instance with the form. */
  async function startWithSilentReceiver() {
    const where = await target();
    receiver.reset();
    receiver.handle(() => undefined);
    return { where, first: await startWithForm(where) };
  }
  const requestInFlight = () =>
    until(
      async () => receiver.requests.length,
      (n) => n === 1,
      'the request in flight',
    );

  it('a run killed while waiting for a retry resumes after restart: every step once, one record', async () => {
    const where = await target();
    let calls = 0;
    receiver.handle((_req, res) => {
      calls += 1;
      res.writeHead(calls === 1 ? 503 : 200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    const first = await startWithForm(where);
    const workflowId = await createWorkflowOn(first, 'Crash test', 'save', {
      retry: { enabled: true, maxAttempts: 3, backoff: 'fixed', delayMs: 3000 },
      steps: saveThenPost(receiver.url('/hook')),
    });
    const queued = await executeOn(first, workflowId, first.configId, { name: 'Ann' });
    expect(queued.status).toBe(202);
    const runId = queued.body.runId as string;
    const runOf = (server: ServiceProcess, token: string) => () =>
      call(server, 'GET', `/api/workflow/runs/${runId}`, token);
    // The api step failed once (503) and the run waits in the queue for its second attempt.
    await until(
      runOf(first.server, first.token),
      (r) => r.body.status === 'queued' && calls === 1,
      'the queued retry',
    );
    await first.server.kill();

    const second = await start(where);
    const run = await until(
      runOf(second.server, second.token),
      (r) => r.body.status === 'success',
      'the resumed run',
    );
    expect(run.body.steps).toEqual([
      expect.objectContaining({ name: 'store', status: 'success', attempts: 1 }),
      expect.objectContaining({ name: 'tell', status: 'success', attempts: 2 }),
    ]);
    expect(calls).toBe(2);
    const records = await call(second.server, 'GET', `/api/data/${first.configId}`, second.token);
    expect(records.body.total).toBe(1);
    expect(JSON.parse(receiver.requests[1].body)).toEqual({ id: records.body.data[0]._id });
  }, 120_000);

  it('a run inside its request, killed with its api step in flight after a save: resumed, one record, nothing sent twice', async () => {
    const { where, first } = await startWithSilentReceiver();
    const workflowId = await createWorkflowOn(first, 'Synchronous', 'save', {
      steps: [
        { name: 'check', type: 'validate' },
        { name: 'store', type: 'save' },
        {
          name: 'tell',
          type: 'api',
          onError: 'continue',
          config: {
            url: receiver.url('/slow'),
            method: 'POST',
            payload: { id: '{{savedData._id}}' },
            timeoutMs: 60000,
          },
        },
        { name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } },
      ],
    });
    // No `Prefer: respond-async`: the run happens inside this request, which the kill cuts off.
    const cutOff = executeOn(first, workflowId, first.configId, { name: 'Ann' }, 'sync');
    cutOff.catch(() => undefined);
    await requestInFlight();
    await first.server.kill();
    await expect(cutOff).rejects.toThrow('fetch failed');

    const second = await start(where);
    const history = await until(
      () => call(second.server, 'GET', `/api/workflow/${workflowId}/runs`, second.token),
      (r) => r.body.data?.[0]?.status === 'success',
      'the resumed run',
    );
    const [run] = history.body.data;
    expect(history.body.totalCount).toBe(1);
    expect(run.steps.map((step: any) => [step.name, step.status])).toEqual([
      ['check', 'success'],
      ['store', 'success'],
      ['tell', 'interrupted'],
      ['shape', 'success'],
    ]);
    expect(receiver.requests).toHaveLength(1);
    const records = await call(second.server, 'GET', `/api/data/${first.configId}`, second.token);
    expect(records.body.total).toBe(1);
    expect(records.body.data[0]._id).toBe(run.dataId);
    expect(JSON.parse(receiver.requests[0].body)).toEqual({ id: run.dataId });
  }, 120_000);

  it('a non-replayable step in flight when the process died ends interrupted and is not sent again', async () => {
    const { where, first } = await startWithSilentReceiver();
    const workflowId = await createWorkflowOn(first, 'In flight', 'custom', {
      steps: [{ name: 'tell', type: 'api', config: { url: receiver.url('/slow'), timeoutMs: 60000 } }],
    });
    const queued = await executeOn(first, workflowId, first.configId, {});
    await requestInFlight();
    await first.server.kill();

    const second = await start(where);
    const run = await until(
      () => call(second.server, 'GET', `/api/workflow/runs/${queued.body.runId}`, second.token),
      (r) => r.body.status === 'failed',
      'the interrupted run',
    );
    expect(run.body.steps).toEqual([
      expect.objectContaining({
        name: 'tell',
        status: 'interrupted',
        error: expect.objectContaining({ code: 'INTERRUPTED' }),
      }),
    ]);
    expect(receiver.requests).toHaveLength(1);
  }, 120_000);
});
