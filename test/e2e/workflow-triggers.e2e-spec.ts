import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/raw-rows';
import { EventDispatcher } from '../../src/events/event-dispatcher.service';
import type { DomainEvent } from '../../src/events/domain-event';
import { WorkflowTriggerConsumer } from '../../src/workflow/triggers/workflow-trigger.consumer';
import { createConfig } from '../factories/config.factory';
import { adminToken, createUser, type TestUser } from '../factories/user.factory';
import { createTestApp, type TestApp } from '../utils/test-app';
import { activeRecords, createSteps } from '../utils/workflow-api';

/**
 * Event-triggered workflows: a definition's `triggers` queue one run per matching event, as the
 * user who caused it, with the record as `input` and `savedData`; no loops, bounded chains.
 */
describe('event-triggered workflows', () => {
  let t: TestApp;
  let admin: string;
  let alice: TestUser;
  let formA: string;
  let formB: string;

  beforeAll(async () => {
    t = await createTestApp({
      env: { EVENTS_POLL_MS: '50', WORKFLOW_POLL_MS: '50', WORKFLOW_TRIGGER_MAX_DEPTH: '2' },
    });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
    admin = await adminToken(t);
    alice = await createUser(t);
    formA = await createConfig(t, admin, { title: 'Orders' });
    formB = await createConfig(t, admin, { title: 'Copies' });
  });

  const submit = async (configId: string, payload: object, token = alice.token) => {
    const response = await t.request({ method: 'POST', url: `/api/data/${configId}`, token, payload });
    expect(response.statusCode).toBe(201);
    return response.json().dataId as string;
  };
  const runsOf = async (workflowId: string) => {
    const response = await t.request({
      method: 'GET',
      url: `/api/workflow/${workflowId}/runs`,
      token: admin,
    });
    expect(response.statusCode).toBe(200);
    return response.json().data as any[];
  };
  /** Hands out every event and drains the queue until nothing is left to do. */
  const settle = async () => {
    let quietRounds = 0;
    for (let round = 0; round < 200 && quietRounds < 4; round++) {
      await t.app.get(EventDispatcher).dispatch();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const [{ n }] = rowsOf(
        await t.database.client.db.execute(
          sql`select (select count(*) from domain_events) + (select count(*) from workflow_runs
            where status in ('queued', 'running')) as n`,
        ),
      );
      quietRounds = Number(n) === 0 ? quietRounds + 1 : 0;
    }
  };

  it('queues one run per created record, as its author, with the record as input and savedData', async () => {
    const workflowId = await createSteps(
      t,
      admin,
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
      userId: alice.user.id,
      configId: formA,
      trigger: { event: 'record.created', eventId: expect.any(String), depth: 1 },
    });
    const detail = (
      await t.request({ method: 'GET', url: `/api/workflow/runs/${runs[0].id}`, token: alice.token })
    ).json();
    const results = Object.fromEntries(detail.steps.map((step: any) => [step.name, step.result]));
    expect(results).toEqual({ fromRecord: { id: dataId, by: alice.user.id }, fromInput: { who: 'Ann' } });

    // The same event handed out again (a dispatcher that died before removing it) queues nothing more.
    const again: DomainEvent = {
      id: runs[0].trigger.eventId,
      type: 'record.created',
      occurredAt: new Date(),
      siteId: null,
      configId: formA,
      actorId: alice.user.id,
      origin: { kind: 'route', route: 'POST /api/data/:configId' },
      data: { record: { _id: dataId, data: { name: 'Ann', qty: 2 } } },
    };
    await t.app.get(WorkflowTriggerConsumer).consume([again, again]);
    await settle();
    expect(await runsOf(workflowId)).toHaveLength(1);
  });

  it("does not trigger a workflow by its own run's save, and stops a chain at WORKFLOW_TRIGGER_MAX_DEPTH", async () => {
    // A copies every new record of A into A again (its own save must not trigger it again) ...
    const selfCopy = await createSteps(
      t,
      admin,
      [{ name: 'copy', type: 'save', config: { configId: formA } }],
      {
        config: { triggers: [{ event: 'record.created', configId: formA }] },
      },
    );
    // ... B copies A into B, and back copies B into A: A -> B (depth 1) -> A (depth 2) -> stop.
    const toB = await createSteps(t, admin, [{ name: 'copy', type: 'save', config: { configId: formB } }], {
      config: { triggers: [{ event: 'record.created', configId: formA }] },
    });
    const back = await createSteps(t, admin, [{ name: 'copy', type: 'save', config: { configId: formA } }], {
      config: { triggers: [{ event: 'record.created', configId: formB }] },
    });
    await submit(formA, { name: 'Ann', qty: 2 });
    await settle();

    const depths = async (workflowId: string) =>
      (await runsOf(workflowId)).map((run) => [run.status, run.trigger.depth]).sort();
    // selfCopy: the route's record (depth 1) and back's copy (depth 3 > 2: refused) -> one run.
    expect(await depths(selfCopy)).toEqual([['success', 1]]);
    // toB: the route's record (1) and selfCopy's copy (2); back's copy in A would be depth 3.
    expect(await depths(toB)).toEqual([
      ['success', 1],
      ['success', 2],
    ]);
    // back: toB's first copy (2); toB's second copy would be depth 3.
    expect(await depths(back)).toEqual([['success', 2]]);
    expect((await activeRecords(t, admin, formA)).total).toBe(3);
    expect((await activeRecords(t, admin, formB)).total).toBe(2);
  });

  it('queues nothing for a user who may not run the workflow', async () => {
    const workflowId = await createSteps(
      t,
      admin,
      [{ name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } }],
      {
        permissions: { roles: ['manager'] },
        config: { triggers: [{ event: 'record.created' }] },
      },
    );
    await submit(formA, { name: 'Ann', qty: 2 });
    const manager = await createUser(t, { role: 'manager' });
    await submit(formA, { name: 'Mia', qty: 1 }, manager.token);
    await settle();
    const runs = await runsOf(workflowId);
    expect(runs.map((run) => run.userId)).toEqual([manager.user.id]);
  });

  it('triggers on a finished run (the run as input), not on its own end', async () => {
    const first = await createSteps(t, admin, [
      { name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } },
    ]);
    const follower = await createSteps(
      t,
      admin,
      [
        {
          name: 'seen',
          type: 'transform',
          config: { mapping: { runId: 'id', status: 'status', workflowId: 'workflowId' } },
        },
      ],
      { config: { triggers: [{ event: 'workflow.run.finished', configId: formA }] } },
    );
    const executed = await t.request({
      method: 'POST',
      url: `/api/workflow/${first}/execute`,
      token: alice.token,
      payload: { configId: formA, data: { name: 'Ann' } },
    });
    expect(executed.statusCode).toBe(200);
    await settle();
    const runs = await runsOf(follower);
    expect(runs).toHaveLength(1);
    expect(runs[0].status).toBe('success');
    const detail = (
      await t.request({ method: 'GET', url: `/api/workflow/runs/${runs[0].id}`, token: admin })
    ).json();
    expect(detail.steps[0].result).toEqual({
      runId: executed.json().runId,
      status: 'success',
      workflowId: first,
    });
    expect(runs[0].trigger).toMatchObject({ event: 'workflow.run.finished', depth: 1 });
  });

  it('refuses a trigger on an unknown event or with a bad configId (422)', async () => {
    for (const triggers of [
      [{ event: 'record.exploded' }],
      [{ event: 'record.created', configId: 'nope' }],
      'x',
    ]) {
      const response = await t.request({
        method: 'POST',
        url: '/api/workflow',
        token: admin,
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
