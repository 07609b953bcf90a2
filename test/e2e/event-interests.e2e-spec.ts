import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/raw-rows';
import { EventDispatcher } from '../../src/events/event-dispatcher.service';
import { EventInterests } from '../../src/events/event-interests.service';
import { type TestUser } from '../factories/user.factory';
import { type HttpTestServer } from '../utils/http-test-server';
import { useAppSuite } from '../utils/app-suite';
import type { TestApp } from '../utils/test-app';
import { createSteps } from '../utils/workflow-api';

const GRACE_MS = 300;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A change writes its domain event only when somebody takes it (a webhook subscription, a workflow
 * trigger): an installation using neither writes none. What is wanted is declared before the
 * subscription or trigger is stored, and what nobody wants any more is dropped by the dispatcher's
 * reconciliation once older than EVENTS_INTEREST_GRACE_MS.
 */
describe('event interests', () => {
  let receiver: HttpTestServer;
  let t: TestApp;
  let admin: string;
  let alice: TestUser;
  let configId: string;
  let otherConfigId: string;

  useAppSuite(
    (suite) =>
      ({
        t,
        admin,
        partner: receiver,
        user: alice,
        configIds: [configId, otherConfigId],
      } = suite),
    {
      env: {
        EVENTS_POLL_MS: '600000',
        EVENTS_INTEREST_GRACE_MS: String(GRACE_MS * 4),
        WEBHOOK_WORKERS: '0',
        WORKFLOW_WORKERS: '0',
      },
      partner: true,
      users: 1,
      forms: 2,
    },
  );

  const interests = async () =>
    (await t.app.get(EventInterests).list())
      .map(
        (interest) =>
          `${interest.type} ${interest.configId === configId ? 'form' : (interest.configId ?? 'any')}`,
      )
      .sort();
  /** Reconciles once every declaration so far is older than the grace period. */
  const reconcileLater = async () => {
    await sleep(GRACE_MS * 4 + 100);
    await t.app.get(EventDispatcher).reconcileInterests();
  };
  /** Events written so far (the dispatcher may have handed them out and removed them since). */
  const eventsWritten = async () => {
    const db = t.database.client.db;
    const [{ name }] = rowsOf(
      await db.execute(sql`select pg_get_serial_sequence('domain_events', 'seq') as name`),
    );
    const [row] = rowsOf(
      await db.execute(
        sql.raw(`select case when is_called then last_value else 0 end as n from ${String(name)}`),
      ),
    );
    return Number(row.n);
  };
  const deliveredTypes = async (webhookId: string) => {
    const response = await t.request({
      method: 'GET',
      url: `/api/webhooks/${webhookId}/deliveries`,
      token: admin,
    });
    expect(response.statusCode).toBe(200);
    return (response.json().data as Array<{ eventType: string }>)
      .map((delivery) => delivery.eventType)
      .sort();
  };
  const submit = async (form = configId) => {
    const response = await t.request({
      method: 'POST',
      url: `/api/data/${form}`,
      token: alice.token,
      payload: { name: 'Ada', qty: 1 },
    });
    expect(response.statusCode).toBe(201);
    return response.json<{ dataId: string }>().dataId;
  };
  const remove = async (dataId: string) => {
    const response = await t.request({
      method: 'DELETE',
      url: `/api/data/${configId}/${dataId}`,
      token: admin,
    });
    expect(response.statusCode).toBe(200);
  };

  it('writes no event when nobody takes events, and again once a subscription wants them', async () => {
    await reconcileLater();
    expect(await interests()).toEqual([]);
    await remove(await submit());
    expect(await eventsWritten()).toBe(0);

    const subscribed = await t.request({
      method: 'POST',
      url: '/api/webhooks',
      token: admin,
      payload: { url: receiver.url('/hooks'), events: ['record.created', 'record.deleted'], configId },
    });
    expect(subscribed.statusCode).toBe(201);
    expect(await interests()).toEqual(['record.created form', 'record.deleted form']);
    const dataId = await submit();
    await submit(otherConfigId);
    await remove(dataId);
    expect(await eventsWritten()).toBe(2);
    await t.app.get(EventDispatcher).dispatch();
    expect(await deliveredTypes(subscribed.json().id)).toEqual(['record.created', 'record.deleted']);

    // Still wanted after a reconciliation; gone after the subscription is.
    await reconcileLater();
    expect(await interests()).toEqual(['record.created form', 'record.deleted form']);
    const removed = await t.request({
      method: 'DELETE',
      url: `/api/webhooks/${subscribed.json().id}`,
      token: admin,
    });
    expect(removed.statusCode).toBe(200);
    await reconcileLater();
    expect(await interests()).toEqual([]);
  });

  it("a workflow's trigger makes its event wanted; only that event is written", async () => {
    await reconcileLater();
    const workflowId = await createSteps(t, admin, [{ name: 'store', type: 'save', config: {} }], {
      config: { triggers: [{ event: 'record.updated', configId }] },
    });
    expect(await interests()).toEqual(['record.updated form']);
    await reconcileLater();
    expect(await interests()).toEqual(['record.updated form']);

    const dataId = await submit();
    expect(await eventsWritten()).toBe(0);
    const updated = await t.request({
      method: 'PUT',
      url: `/api/data/${configId}/${dataId}`,
      token: admin,
      payload: { name: 'Ada Lovelace', qty: 2 },
    });
    expect(updated.statusCode).toBe(200);
    expect(await eventsWritten()).toBe(1);

    // Deactivated: nobody takes it any more.
    const deleted = await t.request({ method: 'DELETE', url: `/api/workflow/${workflowId}`, token: admin });
    expect(deleted.statusCode).toBe(200);
    await reconcileLater();
    expect(await interests()).toEqual([]);
  });

  it('keeps a declaration younger than the grace period even when the consumers do not list it yet', async () => {
    await reconcileLater();
    await t.app.get(EventInterests).declare([{ type: 'record.restored', configId: null }]);
    await t.app.get(EventDispatcher).reconcileInterests();
    expect(await interests()).toEqual(['record.restored any']);
    await reconcileLater();
    expect(await interests()).toEqual([]);
  });
});
