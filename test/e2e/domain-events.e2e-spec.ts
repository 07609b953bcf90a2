import { Module } from '@nestjs/common';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/raw-rows';
import type { DomainEvent } from '../../src/events/domain-event';
import { EventConsumer } from '../../src/events/event-consumer';
import { RecordsRepository } from '../../src/data/records.repository';
import { DomainEventsRepository } from '../../src/events/domain-events.repository';
import { EventDispatcher } from '../../src/events/event-dispatcher.service';
import { createRecord } from '../factories/record.factory';
import { postRecord } from '../utils/api-requests';
import { useAppSuite } from '../utils/app-suite';
import { createSteps, run } from '../utils/workflow-api';

/** A third-party consumer, registered the way webhooks and triggers are: it keeps what it got. */
@EventConsumer('collector')
class CollectingConsumer {
  static events: DomainEvent[] = [];
  static failNext = 0;
  consume(events: DomainEvent[]): Promise<void> {
    if (CollectingConsumer.failNext > 0) {
      CollectingConsumer.failNext--;
      return Promise.reject(new Error('consumer failed on purpose'));
    }
    CollectingConsumer.events.push(...events);
    return Promise.resolve();
  }
}

@Module({ providers: [CollectingConsumer] })
class CollectorModule {}

/**
 * Domain events: every record change and every finished run writes an event in the statement of
 * the change, and the dispatcher hands it to every consumer after the commit.
 */
describe('domain events outbox', () => {
  const s = useAppSuite({
    modules: [CollectorModule],
    // No queue workers: a queued run stays queued until the test cancels it.
    env: {
      EVENTS_RETRY_BASE_MS: '50',
      EVENTS_LEASE_MS: '1000',
      EVENTS_POLL_MS: '600000',
      WORKFLOW_WORKERS: '0',
    },
    users: 1,
    forms: [
      { preferences: { saveLimit: 1, allowEdit: true, allowDelete: true, storeComputedResults: false } },
    ],
  });
  beforeEach(async () => {
    CollectingConsumer.events = [];
    CollectingConsumer.failNext = 0;
    // The collector lists no interests, so it takes every event: wanted from this reconciliation on.
    await s.t.app.get(EventDispatcher).reconcileInterests();
  });

  const dispatched = async () => {
    await s.t.app.get(EventDispatcher).dispatch();
    return CollectingConsumer.events;
  };
  const pendingEvents = async () =>
    Number(
      rowsOf(await s.t.database.client.db.execute(sql`select count(*)::int as n from domain_events`))[0].n,
    );

  it('reports create, update, patch, delete and restore with the record as the API returns it', async () => {
    const { t, user: alice, configId } = s;
    const created = await createRecord(t, alice.token, configId, { qty: 2, name: 'Ann', price: 3 });
    const dataId = created.dataId;
    const url = `/api/data/${configId}/${dataId}`;
    expect(
      (await t.request({ method: 'PATCH', url, token: alice.token, payload: { qty: 4 } })).statusCode,
    ).toBe(200);
    expect((await t.request({ method: 'DELETE', url, token: alice.token })).statusCode).toBe(200);
    expect((await t.request({ method: 'POST', url: `${url}/restore`, token: alice.token })).statusCode).toBe(
      200,
    );

    const events = await dispatched();
    expect(events.map((event) => event.type)).toEqual([
      'record.created',
      'record.updated',
      'record.deleted',
      'record.restored',
    ]);
    const [create, update] = events;
    expect(create).toMatchObject({
      configId,
      actorId: alice.user.id,
      siteId: null,
      origin: { kind: 'route', route: 'POST /api/data/:configId' },
      data: {
        record: { _id: dataId, configId, userId: alice.user.id, isActive: true, deletedAt: null },
        changes: { qty: { after: 2 }, name: { after: 'Ann' }, price: { after: 3 } },
        historyId: expect.any(Number),
      },
    });
    // The record's fields in the order they were submitted, as the API returns them.
    expect(Object.keys((create.data.record as { data: object }).data)).toEqual(['qty', 'name', 'price']);
    expect((create.data.record as { createdAt: string }).createdAt).toBe(created.data.createdAt);
    expect(update.data).toMatchObject({
      record: { data: { qty: 4, name: 'Ann', price: 3 } },
      changes: { qty: { before: 2, after: 4 } },
    });
    expect(new Set(events.map((event) => event.id)).size).toBe(4);
    expect(await pendingEvents()).toBe(0);
  });

  it('writes no event for a change that did not happen (a refused create, a repeated delete)', async () => {
    const { t, user: alice, configId } = s;
    const first = await createRecord(t, alice.token, configId, { name: 'Ann', qty: 1 });
    const refused = await postRecord(t, alice.token, configId, { name: 'Ann', qty: 2 });
    expect(refused.statusCode).toBe(400);
    const url = `/api/data/${configId}/${first.dataId}`;
    expect((await t.request({ method: 'DELETE', url, token: alice.token })).statusCode).toBe(200);
    expect((await t.request({ method: 'DELETE', url, token: alice.token })).statusCode).toBe(404);
    expect((await dispatched()).map((event) => event.type)).toEqual(['record.created', 'record.deleted']);
  });

  it('reports a finished run, and the save of a run with the run as origin', async () => {
    const { t, admin, user: alice, configId } = s;
    const workflowId = await createSteps(t, admin, [{ name: 'store', type: 'save' }]);
    const result = await run(t, alice.token, workflowId, configId, { name: 'Bob', qty: 3 });
    expect(result.success).toBe(true);
    const events = await dispatched();
    expect(events.map((event) => event.type)).toEqual(['record.created', 'workflow.run.finished']);
    expect(events[0].origin).toEqual({ kind: 'workflow', runId: result.runId, step: 'store' });
    expect(events[1]).toMatchObject({
      actorId: alice.user.id,
      configId,
      data: {
        run: {
          id: result.runId,
          workflowId,
          status: 'success',
          configId,
          dataId: result.results.store.dataId,
          userId: alice.user.id,
          startedAt: expect.any(String),
          finishedAt: expect.any(String),
        },
      },
    });
  });

  it('reports a queued run cancelled before it started as finished, cancelled', async () => {
    const { t, admin, user: alice, configId } = s;
    const workflowId = await createSteps(t, admin, [{ name: 'store', type: 'save' }]);
    const queued = await t.request({
      method: 'POST',
      url: `/api/workflow/${workflowId}/execute`,
      token: alice.token,
      headers: { prefer: 'respond-async' },
      payload: { configId, data: { name: 'Bob', qty: 3 } },
    });
    expect(queued.statusCode).toBe(202);
    const runId = queued.json().runId as string;
    const cancelled = await t.request({
      method: 'POST',
      url: `/api/workflow/runs/${runId}/cancel`,
      token: alice.token,
    });
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ status: 'cancelled' });

    const events = await dispatched();
    expect(events.map((event) => event.type)).toEqual(['workflow.run.finished']);
    expect(events[0]).toMatchObject({
      actorId: alice.user.id,
      configId,
      data: {
        run: {
          id: runId,
          workflowId,
          status: 'cancelled',
          message: 'Workflow cancelled before it started',
          configId,
          dataId: null,
          userId: alice.user.id,
          finishedAt: expect.any(String),
        },
      },
    });
    // Cancelling it again changes nothing and reports nothing more.
    const again = await t.request({
      method: 'POST',
      url: `/api/workflow/runs/${runId}/cancel`,
      token: alice.token,
    });
    expect(again.statusCode).toBe(409);
    expect((await dispatched()).length).toBe(1);
  });

  it('hands a batch out again when a consumer failed, until it is taken', async () => {
    const { t, user: alice, configId } = s;
    CollectingConsumer.failNext = 2;
    await createRecord(t, alice.token, configId, { name: 'Ann', qty: 1 });
    await dispatched();
    expect(CollectingConsumer.events).toHaveLength(0);
    expect(await pendingEvents()).toBe(1);
    for (let i = 0; i < 50 && CollectingConsumer.events.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await dispatched();
    }
    expect(CollectingConsumer.events.map((event) => event.type)).toEqual(['record.created']);
    expect(await pendingEvents()).toBe(0);
  });

  it('hands out again the events of a dispatcher that died after claiming them, once its lease ran out', async () => {
    const { t, user: alice, configId } = s;
    // A change made through the repository (no nudge of this instance's dispatcher): another
    // instance's dispatcher claims its event and dies before handing it to anyone.
    await t.app.get(RecordsRepository).insertWithinLimit(
      {
        configId,
        configVersion: 1,
        userId: alice.user.id,
        siteId: null,
        data: { name: 'Ann', qty: 1 },
        dataKeys: ['name', 'qty'],
      },
      null,
      { userId: alice.user.id, origin: null },
    );
    const claimed = await t.app.get(DomainEventsRepository).claimDue(10, 1000);
    expect(claimed.map((event) => event.type)).toEqual(['record.created']);
    expect(await dispatched()).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const events = await dispatched();
    expect(events.map((event) => event.id)).toEqual([claimed[0].id]);
    expect(await pendingEvents()).toBe(0);
  });
});
