import { EventDispatcher } from '../../src/events/event-dispatcher.service';
import { EventInterests } from '../../src/events/event-interests.service';
import { createRecord, updateRecord } from '../factories/record.factory';
import { useAppSuite } from '../utils/app-suite';
import { domainEventsWritten } from '../utils/domain-events';
import { createWebhook, webhookDeliveries } from '../utils/webhooks-api';
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
  const s = useAppSuite({
    env: {
      EVENTS_POLL_MS: '600000',
      EVENTS_INTEREST_GRACE_MS: String(GRACE_MS * 4),
      WEBHOOK_WORKERS: '0',
      WORKFLOW_WORKERS: '0',
    },
    partner: true,
    users: 1,
    forms: 2,
  });

  const interests = async () =>
    (await s.t.app.get(EventInterests).list())
      .map(
        (interest) =>
          `${interest.type} ${interest.configId === s.configId ? 'form' : (interest.configId ?? 'any')}`,
      )
      .sort();
  /** Reconciles once every declaration so far is older than the grace period. */
  const reconcileLater = async () => {
    await sleep(GRACE_MS * 4 + 100);
    await s.t.app.get(EventDispatcher).reconcileInterests();
  };
  const eventsWritten = () => domainEventsWritten(s.t);
  const deliveredTypes = async (webhookId: string) =>
    (await webhookDeliveries(s.t, s.admin, webhookId)).data.map((delivery) => delivery.eventType).sort();
  const submit = async (form = s.configId) =>
    (await createRecord(s.t, s.user.token, form, { name: 'Ada', qty: 1 })).dataId;
  const remove = async (dataId: string) => {
    const response = await s.t.request({
      method: 'DELETE',
      url: `/api/data/${s.configId}/${dataId}`,
      token: s.admin,
    });
    expect(response.statusCode).toBe(200);
  };

  it('writes no event when nobody takes events, and again once a subscription wants them', async () => {
    const { t, admin, configId } = s;
    await reconcileLater();
    expect(await interests()).toEqual([]);
    await remove(await submit());
    expect(await eventsWritten()).toBe(0);

    const subscribed = await createWebhook(t, admin, {
      url: s.partner.url('/hooks'),
      events: ['record.created', 'record.deleted'],
      configId,
    });
    expect(await interests()).toEqual(['record.created form', 'record.deleted form']);
    const dataId = await submit();
    await submit(s.configIds[1]);
    await remove(dataId);
    expect(await eventsWritten()).toBe(2);
    await t.app.get(EventDispatcher).dispatch();
    expect(await deliveredTypes(subscribed.id)).toEqual(['record.created', 'record.deleted']);

    // Still wanted after a reconciliation; gone after the subscription is.
    await reconcileLater();
    expect(await interests()).toEqual(['record.created form', 'record.deleted form']);
    const removed = await t.request({
      method: 'DELETE',
      url: `/api/webhooks/${subscribed.id}`,
      token: admin,
    });
    expect(removed.statusCode).toBe(200);
    await reconcileLater();
    expect(await interests()).toEqual([]);
  });

  it("a workflow's trigger makes its event wanted; only that event is written", async () => {
    const { t, admin, configId } = s;
    await reconcileLater();
    const workflowId = await createSteps(t, admin, [{ name: 'store', type: 'save', config: {} }], {
      config: { triggers: [{ event: 'record.updated', configId }] },
    });
    expect(await interests()).toEqual(['record.updated form']);
    await reconcileLater();
    expect(await interests()).toEqual(['record.updated form']);

    const dataId = await submit();
    expect(await eventsWritten()).toBe(0);
    await updateRecord(t, admin, configId, dataId, { name: 'Ada Lovelace', qty: 2 });
    expect(await eventsWritten()).toBe(1);

    // Deactivated: nobody takes it any more.
    const deleted = await t.request({ method: 'DELETE', url: `/api/workflow/${workflowId}`, token: admin });
    expect(deleted.statusCode).toBe(200);
    await reconcileLater();
    expect(await interests()).toEqual([]);
  });

  it('keeps a declaration younger than the grace period even when the consumers do not list it yet', async () => {
    const { t } = s;
    await reconcileLater();
    await t.app.get(EventInterests).declare([{ type: 'record.restored', configId: null }]);
    await t.app.get(EventDispatcher).reconcileInterests();
    expect(await interests()).toEqual(['record.restored any']);
    await reconcileLater();
    expect(await interests()).toEqual([]);
  });
});
