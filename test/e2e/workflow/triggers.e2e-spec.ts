import { sql } from 'drizzle-orm';
import { rowsOf } from '../../../src/database/raw-rows';
import { EventDispatcher } from '../../../src/events/event-dispatcher.service';
import type { DomainEvent } from '../../../src/events/domain-event';
import { WorkflowTriggerConsumer } from '../../../src/workflow/triggers/workflow-trigger.consumer';
import { createConfig } from '../../factories/config.factory';
import { createUser } from '../../factories/user.factory';
import { useAppSuite } from '../../utils/app-suite';
import { activeRecords, createSteps, executeAsync, getRun, listRuns, run } from '../../utils/workflow-api';
import { createSite } from '../../factories/site.factory';
import { createRole } from '../../factories/role.factory';

/**
 * Event-triggered workflows: a definition's `triggers` queue one run per matching event, as the
 * trigger's `runAs` user (the record's owner by default), with the record as `input` and
 * `savedData`; bounded: each workflow once per chain, chains of limited depth, a cap per root event.
 */
describe('event-triggered workflows', () => {
  const s = useAppSuite({
    env: { EVENTS_POLL_MS: '50', WORKFLOW_POLL_MS: '50', WORKFLOW_TRIGGER_MAX_RUNS_PER_EVENT: '5' },
    users: 1,
    forms: [{ title: 'Orders' }, { title: 'Copies' }],
  });
  /** The suite's two forms, by the names the tests give them. */
  let formA: string;
  let formB: string;
  beforeEach(() => ([formA, formB] = s.configIds));

  const submit = async (configId: string, payload: object, token = s.user.token) => {
    const response = await s.t.request({ method: 'POST', url: `/api/data/${configId}`, token, payload });
    expect(response.statusCode).toBe(201);
    return response.json().dataId as string;
  };
  const runsOf = async (workflowId: string) => (await listRuns(s.t, s.admin, workflowId)).data;
  const postAs = (token: string, payload: Record<string, unknown>) =>
    s.t.request({ method: 'POST', url: '/api/workflow', token, payload });
  /** How many triggers were skipped for `reason` so far (the Prometheus counter). */
  const skipped = async (reason: string) => {
    const text = (await s.t.request({ method: 'GET', url: '/metrics' })).body;
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`fdws_workflow_triggers_skipped_total{reason="${reason}"}`));
    return line ? Number(line.split(' ').pop()) : 0;
  };
  /** Hands out every event and drains the queue until nothing is left to do. */
  const settle = async () => {
    let quietRounds = 0;
    for (let round = 0; round < 200 && quietRounds < 4; round++) {
      await s.t.app.get(EventDispatcher).dispatch();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const [{ n }] = rowsOf(
        await s.t.database.client.db.execute(
          sql`select (select count(*) from domain_events) + (select count(*) from workflow_runs
            where status in ('queued', 'running')) as n`,
        ),
      );
      quietRounds = Number(n) === 0 ? quietRounds + 1 : 0;
    }
  };

  it('queues one run per created record, as its author, with the record as input and savedData', async () => {
    const workflowId = await createSteps(
      s.t,
      s.admin,
      [
        {
          name: 'fromRecord',
          type: 'transform',
          config: { source: 'savedData', mapping: { id: '_id', by: 'userId' } },
        },
        { name: 'fromInput', type: 'transform', config: { mapping: { who: 'name' } } },
      ],
      { config: { triggers: [{ event: 'record.created', configId: formA }] } },
    );
    const dataId = await submit(formA, { name: 'Ann', qty: 2 });
    await submit(formB, { name: 'Not this form', qty: 1 });
    await settle();

    const runs = await runsOf(workflowId);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      status: 'success',
      userId: s.user.user.id,
      configId: formA,
      trigger: { event: 'record.created', eventId: expect.any(String), depth: 1, chain: [workflowId] },
    });
    expect(runs[0].trigger.rootEventId).toBe(runs[0].trigger.eventId);
    const detail = await getRun(s.t, s.user.token, runs[0].id);
    const results = Object.fromEntries(detail.steps.map((step: any) => [step.name, step.result]));
    expect(results).toEqual({ fromRecord: { id: dataId, by: s.user.user.id }, fromInput: { who: 'Ann' } });

    // The same event handed out again (a dispatcher that died before removing it) queues nothing more.
    const again: DomainEvent = {
      id: runs[0].trigger.eventId,
      type: 'record.created',
      occurredAt: new Date(),
      siteId: null,
      configId: formA,
      actorId: s.user.user.id,
      origin: { kind: 'route', route: 'POST /api/data/:configId' },
      data: { record: { _id: dataId, data: { name: 'Ann', qty: 2 } } },
    };
    await s.t.app.get(WorkflowTriggerConsumer).consume([again, again]);
    await settle();
    expect(await runsOf(workflowId)).toHaveLength(1);
  });

  /** A workflow triggered by records of `from` that saves the record's data into `to`. */
  const copier = (from: string, to: string) =>
    createSteps(s.t, s.admin, [{ name: 'copy', type: 'save', config: { configId: to } }], {
      config: { triggers: [{ event: 'record.created', configId: from }] },
    });
  const depthsOf = async (workflowId: string) =>
    (await runsOf(workflowId)).map((run) => [run.status, run.trigger.depth]);

  it('runs each workflow once per chain: four workflows saving into the form they watch give four runs, not 52', async () => {
    const workflows = [];
    for (let i = 0; i < 4; i++) workflows.push(await copier(formA, formA));
    await submit(formA, { name: 'Ann', qty: 2 });
    await settle();

    for (const workflowId of workflows) expect(await depthsOf(workflowId)).toEqual([['success', 1]]);
    // The route's record and one copy per workflow; each copy's event found every workflow already in its chain.
    expect((await activeRecords(s.t, s.admin, formA)).total).toBe(5);
    const [run] = await runsOf(workflows[0]);
    expect(run.trigger.chain).toEqual([workflows[0]]);
  });

  it('carries the workflows a chain passed through: A -> B -> A stops before A runs again', async () => {
    const toB = await copier(formA, formB);
    const back = await copier(formB, formA);
    await submit(formA, { name: 'Ann', qty: 2 });
    await settle();

    expect(await depthsOf(toB)).toEqual([['success', 1]]);
    expect(await depthsOf(back)).toEqual([['success', 2]]);
    const [backRun] = await runsOf(back);
    const [toBRun] = await runsOf(toB);
    expect(backRun.trigger).toMatchObject({ chain: [toB, back], rootEventId: toBRun.trigger.eventId });
    expect((await activeRecords(s.t, s.admin, formA)).total).toBe(2);
    expect((await activeRecords(s.t, s.admin, formB)).total).toBe(1);
  });

  it('does not trigger a workflow by changes of a run it started by hand, nor by their consequences', async () => {
    // Executed by hand, `toB` copies into B; `back` copies B into A, which `toB` watches: not again.
    const toB = await copier(formA, formB);
    const back = await copier(formB, formA);
    await run(s.t, s.user.token, toB, formA, { name: 'Ann', qty: 2 });
    await settle();
    expect((await runsOf(toB)).map((run) => run.trigger)).toEqual([null]);
    expect(await depthsOf(back)).toEqual([['success', 1]]);
    expect((await runsOf(back))[0].trigger.chain).toEqual([toB, back]);
    expect((await activeRecords(s.t, s.admin, formA)).total).toBe(1);
    expect((await activeRecords(s.t, s.admin, formB)).total).toBe(1);
  });

  it('stops a chain at WORKFLOW_TRIGGER_MAX_DEPTH (3)', async () => {
    const formC = await createConfig(s.t, s.admin, { title: 'Third' });
    const formD = await createConfig(s.t, s.admin, { title: 'Fourth' });
    const formE = await createConfig(s.t, s.admin, { title: 'Fifth' });
    const chain = [
      await copier(formA, formB),
      await copier(formB, formC),
      await copier(formC, formD),
      await copier(formD, formE),
    ];
    await submit(formA, { name: 'Ann', qty: 2 });
    await settle();
    expect(await Promise.all(chain.map(depthsOf))).toEqual([
      [['success', 1]],
      [['success', 2]],
      [['success', 3]],
      [],
    ]);
    expect((await activeRecords(s.t, s.admin, formE)).total).toBe(0);
  });

  it('caps the runs one root event causes at WORKFLOW_TRIGGER_MAX_RUNS_PER_EVENT, the writer unaffected', async () => {
    const before = await skipped('runs_per_event');
    const workflows = [];
    for (let i = 0; i < 6; i++)
      workflows.push(
        await createSteps(
          s.t,
          s.admin,
          [{ name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } }],
          {
            config: { triggers: [{ event: 'record.created', configId: formA }] },
          },
        ),
      );
    await submit(formA, { name: 'Ann', qty: 2 });
    await settle();
    const counts = await Promise.all(workflows.map(async (id) => (await runsOf(id)).length));
    expect(counts.reduce((a, b) => a + b)).toBe(5);
    expect(counts.every((n) => n <= 1)).toBe(true);
    expect((await skipped('runs_per_event')) - before).toBe(1);
  });

  it('queues nothing for a user who may not run the workflow', async () => {
    const workflowId = await createSteps(
      s.t,
      s.admin,
      [{ name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } }],
      {
        permissions: { roles: ['manager'] },
        config: { triggers: [{ event: 'record.created' }] },
      },
    );
    await submit(formA, { name: 'Ann', qty: 2 });
    const manager = await createUser(s.t, { role: 'manager' });
    await submit(formA, { name: 'Mia', qty: 1 }, manager.token);
    await settle();
    const runs = await runsOf(workflowId);
    expect(runs.map((run) => run.userId)).toEqual([manager.user.id]);
  });

  it('triggers on a finished run (the run as input), not on its own end', async () => {
    const first = await createSteps(s.t, s.admin, [
      { name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } },
    ]);
    const follower = await createSteps(
      s.t,
      s.admin,
      [
        {
          name: 'seen',
          type: 'transform',
          config: { mapping: { runId: 'id', status: 'status', workflowId: 'workflowId' } },
        },
      ],
      { config: { triggers: [{ event: 'workflow.run.finished', configId: formA }] } },
    );
    const executed = await run(s.t, s.user.token, first, formA, { name: 'Ann' });
    await settle();
    const runs = await runsOf(follower);
    expect(runs).toHaveLength(1);
    expect(runs[0].status).toBe('success');
    const detail = await getRun(s.t, s.admin, runs[0].id);
    expect(detail.steps[0].result).toEqual({
      runId: executed.runId,
      status: 'success',
      workflowId: first,
    });
    expect(runs[0].trigger).toMatchObject({ event: 'workflow.run.finished', depth: 1 });
  });

  const transformOn = (
    event: string,
    extra: Record<string, unknown> = {},
    permissions = { roles: ['user'] },
  ) =>
    createSteps(s.t, s.admin, [{ name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } }], {
      permissions,
      config: { triggers: [{ event, configId: formA, ...extra }] },
    });
  const putUser = async (userId: string, body: Record<string, unknown>) => {
    const response = await s.t.request({
      method: 'PUT',
      url: `/api/users/${userId}`,
      token: s.admin,
      payload: body,
    });
    expect(response.statusCode).toBe(200);
  };

  it("runs as the record's owner by default: an admin's edit of a user's record runs with the user's rights", async () => {
    const workflowId = await transformOn('record.updated');
    const dataId = await submit(formA, { name: 'Ann', qty: 2 });
    const edited = await s.t.request({
      method: 'PUT',
      url: `/api/data/${formA}/${dataId}`,
      token: s.admin,
      payload: { name: 'Anne', qty: 2 },
    });
    expect(edited.statusCode).toBe(200);
    await settle();
    const runs = await runsOf(workflowId);
    expect(runs.map((run) => [run.userId, run.status])).toEqual([[s.user.user.id, 'success']]);
  });

  it("runs as the workflow's author (who last saved the definition) with runAs author", async () => {
    const manager = await createUser(s.t, { role: 'manager' });
    const workflowId = await transformOn('record.created', { runAs: 'author' }, { roles: ['manager'] });
    const stored = await s.t.request({ method: 'GET', url: `/api/workflow/${workflowId}`, token: s.admin });
    const adminId = stored.json().authorId;
    expect(adminId).toEqual(expect.any(String));
    // The user may not run it themselves; the author (an admin) may.
    await submit(formA, { name: 'Ann', qty: 2 });
    await settle();
    expect((await runsOf(workflowId)).map((run) => run.userId)).toEqual([adminId]);

    // Saving the definition makes the saver its author; a rename alone does not.
    const renamed = await s.t.request({
      method: 'PUT',
      url: `/api/workflow/${workflowId}`,
      token: s.admin,
      payload: { name: 'Renamed' },
    });
    expect(renamed.json().authorId).toBe(adminId);
    await s.t.database.client.db.execute(
      sql`update workflows set author_id = ${manager.user.id}::uuid where id = ${workflowId}::uuid`,
    );
    await putUser(manager.user.id, { isActive: false });
    await submit(formA, { name: 'Bob', qty: 1 });
    await settle();
    // The author deactivated: skipped, logged, no second run.
    expect(await runsOf(workflowId)).toHaveLength(1);
  });

  it('runs as a named user while that user may run it; demoted or deactivated, the trigger is skipped', async () => {
    const service = await createUser(s.t, { role: 'manager' });
    const workflowId = await transformOn(
      'record.created',
      { runAs: { user: service.user.id } },
      { roles: ['manager'] },
    );
    const before = await skipped('run_as');
    await submit(formA, { name: 'Ann', qty: 2 });
    await settle();
    expect((await runsOf(workflowId)).map((run) => run.userId)).toEqual([service.user.id]);

    await putUser(service.user.id, { role: 'user' });
    await submit(formA, { name: 'Bob', qty: 1 });
    await settle();
    await putUser(service.user.id, { role: 'manager', isActive: false });
    await submit(formA, { name: 'Cy', qty: 1 });
    await settle();
    expect(await runsOf(workflowId)).toHaveLength(1);
    expect((await skipped('run_as')) - before).toBe(2);
    // The writer never saw any of it.
    expect((await activeRecords(s.t, s.admin, formA)).total).toBe(3);
  });

  it('lets only an admin name another user to run as (403 WORKFLOW_RUN_AS_FORBIDDEN); anyone may name themselves', async () => {
    const site = await createSite(s.t, s.admin, 'Delegated', 'delegated.example.com');
    const onSite = { host: 'delegated.example.com' };
    await createRole(s.t, s.admin, 'author', {
      configs: ['read'],
      data: ['read', 'create'],
      workflows: ['read', 'create', 'update', 'execute'],
    });
    const author = await createUser(s.t, { role: 'author', siteId: site });
    const body = (runAs: unknown) => ({
      name: 'Delegated',
      type: 'custom',
      siteId: site,
      permissions: { roles: ['author'] },
      config: {
        steps: [{ name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } }],
        triggers: [{ event: 'record.created', runAs }],
      },
    });
    const post = (runAs: unknown) =>
      s.t.request({
        method: 'POST',
        url: '/api/workflow',
        token: author.token,
        headers: onSite,
        payload: body(runAs),
      });

    const refused = await post({ user: s.user.user.id });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({
      code: 'WORKFLOW_RUN_AS_FORBIDDEN',
      details: { runAs: { user: s.user.user.id } },
    });
    const own = await post({ user: author.user.id });
    expect(own.statusCode).toBe(201);
    expect(own.json().authorId).toBe(author.user.id);
    const updated = await s.t.request({
      method: 'PUT',
      url: `/api/workflow/${own.json().id}`,
      token: author.token,
      headers: onSite,
      payload: { config: body({ user: s.user.user.id }).config },
    });
    expect(updated.statusCode).toBe(403);
    expect(updated.json().code).toBe('WORKFLOW_RUN_AS_FORBIDDEN');
    expect((await post('author')).statusCode).toBe(201);
    const byAdmin = await postAs(s.admin, body({ user: s.user.user.id }));
    expect(byAdmin.statusCode).toBe(201);
  });

  it("triggers a workflow of a site only by its own site's events; a shared one runs only where its run-as user may work", async () => {
    const alpha = await createSite(s.t, s.admin, 'Alpha', 'alpha.example.com');
    const beta = await createSite(s.t, s.admin, 'Beta', 'beta.example.com');
    const alphaUser = await createUser(s.t, { siteId: alpha });
    const betaUser = await createUser(s.t, { siteId: beta });
    const siteWorkflow = await createSteps(
      s.t,
      s.admin,
      [{ name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } }],
      { siteId: alpha, config: { triggers: [{ event: 'record.created', configId: formA }] } },
    );
    const sharedAsAlpha = await transformOn('record.created', { runAs: { user: alphaUser.user.id } });
    const submitOn = async (host: string, token: string, name: string) => {
      const response = await s.t.request({
        method: 'POST',
        url: `/api/data/${formA}`,
        token,
        headers: { host },
        payload: { name, qty: 1 },
      });
      expect(response.statusCode).toBe(201);
    };
    await submitOn('beta.example.com', betaUser.token, 'Beta record');
    await settle();
    expect(await runsOf(siteWorkflow)).toEqual([]);
    expect(await runsOf(sharedAsAlpha)).toEqual([]);

    await submitOn('alpha.example.com', alphaUser.token, 'Alpha record');
    await settle();
    expect((await runsOf(siteWorkflow)).map((run) => run.userId)).toEqual([alphaUser.user.id]);
    expect((await runsOf(sharedAsAlpha)).map((run) => run.userId)).toEqual([alphaUser.user.id]);
  });

  it('refuses a bad runAs (422)', async () => {
    for (const runAs of ['admin', { user: 'nope' }, { user: s.user.user.id, role: 'admin' }, 7]) {
      const response = await postAs(s.admin, {
        name: 'Bad',
        type: 'custom',
        config: {
          steps: [{ name: 'shape', type: 'transform', config: { mapping: { a: 'b' } } }],
          triggers: [{ event: 'record.created', runAs }],
        },
      });
      expect(response.statusCode).toBe(422);
      expect(response.json().validationErrors[0].field).toBe('config.triggers[0].runAs');
    }
  });

  it('refuses a trigger on an unknown event or with a bad configId (422)', async () => {
    for (const triggers of [
      [{ event: 'record.exploded' }],
      [{ event: 'record.created', configId: 'nope' }],
      'x',
    ]) {
      const response = await s.t.request({
        method: 'POST',
        url: '/api/workflow',
        token: s.admin,
        payload: {
          name: 'Bad',
          type: 'custom',
          config: {
            steps: [{ name: 'shape', type: 'transform', config: { mapping: { a: 'b' } } }],
            triggers,
          },
        },
      });
      expect(response.statusCode).toBe(422);
      expect(response.json().code).toBe('VALIDATION_FAILED');
      expect(response.json().validationErrors[0].field).toMatch(/^config\.triggers/);
    }
  });
});

/**
 * Triggered runs count against a per-user bound of their own (WORKFLOW_TRIGGER_MAX_QUEUED_PER_USER),
 * and not against the bound of the runs a user queues themselves (WORKFLOW_MAX_QUEUED_PER_USER).
 * No workers here, so queued runs stay queued.
 */
describe('the per-user bound of triggered runs', () => {
  const s = useAppSuite({
    env: {
      WORKFLOW_WORKERS: '0',
      WORKFLOW_TRIGGER_MAX_QUEUED_PER_USER: '2',
      WORKFLOW_MAX_QUEUED_PER_USER: '1',
    },
    users: 1,
    forms: [{ title: 'Orders' }],
  });

  const queuedOf = async (userId: string) => {
    const [{ triggered, own }] = rowsOf(
      await s.t.database.client.db.execute(
        sql`select count(*) filter (where trigger_root is not null)::int as triggered,
          count(*) filter (where trigger_root is null)::int as own
          from workflow_runs where user_id = ${userId}::uuid and status = 'queued'`,
      ),
    );
    return { triggered: Number(triggered), own: Number(own) };
  };

  it('queues at most WORKFLOW_TRIGGER_MAX_QUEUED_PER_USER triggered runs per user; their own queue stays theirs', async () => {
    const workflowId = await createSteps(
      s.t,
      s.admin,
      [{ name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } }],
      { config: { triggers: [{ event: 'record.created', configId: s.configId }] } },
    );
    for (const name of ['Ann', 'Bob', 'Cy']) {
      const response = await s.t.request({
        method: 'POST',
        url: `/api/data/${s.configId}`,
        token: s.user.token,
        payload: { name, qty: 1 },
      });
      expect(response.statusCode).toBe(201);
    }
    await s.t.app.get(EventDispatcher).dispatch();
    expect(await queuedOf(s.user.user.id)).toEqual({ triggered: 2, own: 0 });

    // The user's own asynchronous execute is bounded by WORKFLOW_MAX_QUEUED_PER_USER alone.
    const own = () => executeAsync(s.t, s.user.token, workflowId, s.configId, { name: 'Own' });
    expect((await own()).statusCode).toBe(202);
    const full = await own();
    expect(full.statusCode).toBe(429);
    expect(full.json().code).toBe('WORKFLOW_QUEUE_FULL');
    expect(await queuedOf(s.user.user.id)).toEqual({ triggered: 2, own: 1 });
  });
});
