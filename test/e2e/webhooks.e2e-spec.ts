import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { rowsOf } from '../../src/database/raw-rows';
import { createConfig } from '../factories/config.factory';
import { createRecord } from '../factories/record.factory';
import { createSite } from '../factories/site.factory';
import { adminToken, createUser } from '../factories/user.factory';
import { startHttpServer, type HttpTestServer, type RecordedRequest } from '../utils/http-test-server';
import { useAppSuite } from '../utils/app-suite';
import { createTestApp, type TestApp } from '../utils/test-app';
import { createTestDatabase, type TestDatabase } from '../utils/test-database';
import { WebhookDeliveryRetention } from '../../src/webhooks/webhook-delivery-retention';
import { until } from '../utils/until';
import { createWebhook, webhookDeliveries } from '../utils/webhooks-api';

/**
 * Signed webhooks against real loopback receivers. Signatures are checked with the `standardwebhooks`
 * package (the reference implementation of the scheme), never with the service's own signing code.
 */

/** Small timings, so retries, disabling and the rotation's grace period happen within the test. */
const TIMINGS = {
  EVENTS_POLL_MS: '50',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_RETRY_BASE_MS: '50',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_LEASE_MS: '2000',
  WEBHOOK_DISABLE_AFTER_MS: '3000',
  // The first delivery after a rotation must be signed within it: 2.5 s was passed once by a CI
  // machine running two suites side by side (the delivery carried the new signature only).
  WEBHOOK_SECRET_GRACE_MS: '8000',
};

type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The first truthy value `probe` gives (every 25 ms); fails after `timeoutMs` naming `what`. 20 s: a
 * delivery's first attempt can pass WEBHOOK_TIMEOUT_MS on a loaded machine, and its retry comes later.
 */
const waitFor = async <T>(what: string, probe: () => Promise<T> | T, timeoutMs = 20_000) =>
  (await until(probe, Boolean, what, timeoutMs, 25)) as Truthy<T>;

/** Verifies one request with the reference implementation; the parsed body, or the thrown error. */
function verify(secret: string, request: RecordedRequest, signature = request.headers['webhook-signature']) {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(signature),
  });
}

/** The newest delivery of a subscription once it is no longer pending. */
const settledOn = (app: TestApp, token: string, webhookId: string) =>
  waitFor('a settled delivery', async () => {
    const [latest] = (await webhookDeliveries(app, token, webhookId)).data;
    return latest && latest.state !== 'pending' ? latest : null;
  });

describe('webhooks', () => {
  let outsider: HttpTestServer;
  let spare: HttpTestServer;
  beforeAll(async () => {
    outsider = await startHttpServer();
    spare = await startHttpServer();
  });
  const s = useAppSuite({
    partner: true,
    env: ({ partner }) => ({
      ...TIMINGS,
      WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${partner.port},127.0.0.1:${spare.port}`,
    }),
    users: 1,
    forms: 1,
  });
  afterAll(async () => {
    await outsider.close();
    await spare.close();
  });
  beforeEach(() => outsider.reset());

  const subscribe = (body: Record<string, unknown>) =>
    createWebhook(s.t, s.admin, { url: s.partner.url('/hooks'), events: ['record.created'], ...body });
  const submit = (data: Record<string, unknown>, headers?: Record<string, string>, configId = s.configId) =>
    createRecord(s.t, s.user.token, configId, data, headers);
  const deliveries = async (webhookId: string) => (await webhookDeliveries(s.t, s.admin, webhookId)).data;
  const settledDelivery = (webhookId: string) => settledOn(s.t, s.admin, webhookId);
  const webhook = async (id: string) =>
    (await s.t.request({ method: 'GET', url: `/api/webhooks/${id}`, token: s.admin })).json();

  describe('subscriptions', () => {
    it('are created, read, listed, changed and deleted by admins, the secret shown only at creation', async () => {
      const { t, admin, configId, partner: receiver } = s;
      const created = await subscribe({
        events: ['record.created', 'workflow.run.finished'],
        description: 'ERP',
      });
      expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
      expect(created).toMatchObject({
        url: receiver.url('/hooks'),
        events: ['record.created', 'workflow.run.finished'],
        configId: null,
        siteId: null,
        description: 'ERP',
        enabled: true,
        disabledReason: null,
        previousSecretExpiresAt: null,
      });

      const read = await t.request({ method: 'GET', url: `/api/webhooks/${created.id}`, token: admin });
      expect(read.statusCode).toBe(200);
      expect(read.json()).not.toHaveProperty('secret');
      expect(read.body).not.toContain(created.secret.slice(6));
      const list = await t.request({ method: 'GET', url: '/api/webhooks', token: admin });
      expect(list.json()).toMatchObject({ totalCount: 1, data: [{ id: created.id }] });
      expect(list.body).not.toContain(created.secret.slice(6));

      const updated = await t.request({
        method: 'PUT',
        url: `/api/webhooks/${created.id}`,
        token: admin,
        payload: { events: ['record.deleted'], configId, description: null },
      });
      expect(updated.statusCode).toBe(200);
      expect(updated.json()).toMatchObject({ events: ['record.deleted'], configId, description: null });

      const removed = await t.request({ method: 'DELETE', url: `/api/webhooks/${created.id}`, token: admin });
      expect(removed.statusCode).toBe(200);
      expect(removed.json().id).toBe(created.id);
      const gone = await t.request({ method: 'GET', url: `/api/webhooks/${created.id}`, token: admin });
      expect(gone.statusCode).toBe(404);
      expect(gone.json().code).toBe('WEBHOOK_NOT_FOUND');
    });

    it('are refused to non-admins (403) on every route', async () => {
      const { t, user: alice, partner: receiver } = s;
      const { id } = await subscribe({});
      const routes: Array<[string, string, object?]> = [
        ['GET', '/api/webhooks'],
        ['POST', '/api/webhooks', { url: receiver.url(), events: ['record.created'] }],
        ['GET', `/api/webhooks/${id}`],
        ['PUT', `/api/webhooks/${id}`, { enabled: false }],
        ['DELETE', `/api/webhooks/${id}`],
        ['POST', `/api/webhooks/${id}/rotate-secret`],
        ['GET', `/api/webhooks/${id}/deliveries`],
        ['POST', `/api/webhooks/${id}/deliveries/${id}/redeliver`],
      ];
      for (const [method, url, payload] of routes) {
        const response = await t.request({ method: method as 'GET', url, token: alice.token, payload });
        expect([method, url, response.statusCode, response.json().code]).toEqual([
          method,
          url,
          403,
          'FORBIDDEN',
        ]);
      }
      expect((await webhook(id)).enabled).toBe(true);
    });

    it('refuse bad bodies with 422 naming the field', async () => {
      const { t, admin, partner: receiver } = s;
      const refused = async (payload: Record<string, unknown>) => {
        const response = await t.request({ method: 'POST', url: '/api/webhooks', token: admin, payload });
        expect(response.statusCode).toBe(422);
        return (response.json().validationErrors as Array<{ field: string }>).map((error) => error.field);
      };
      const valid = { url: receiver.url('/hooks'), events: ['record.created'] };
      expect(await refused({ ...valid, url: 'ftp://example.com/hooks' })).toEqual(['url']);
      expect(await refused({ ...valid, url: 'not a url' })).toEqual(['url']);
      expect(await refused({ ...valid, events: ['record.created', 'record.exploded'] })).toEqual(['events']);
      expect(await refused({ ...valid, events: [] })).toEqual(['events']);
      expect(await refused({ ...valid, secret: 'whsec_mine' })).toEqual(['secret']);
      expect(await refused({ ...valid, configId: '3fa85f64-5717-4562-b3fc-2c963f66afa6' })).toEqual([
        'configId',
      ]);
      expect(await refused({ ...valid, siteId: '3fa85f64-5717-4562-b3fc-2c963f66afa6' })).toEqual(['siteId']);
      const list = await t.request({ method: 'GET', url: '/api/webhooks', token: admin });
      expect(list.json().totalCount).toBe(0);
    });
  });

  it('are documented in /api-docs-json: every route, and each event body as a callback of the create', async () => {
    const { t } = s;
    const document = (await t.request({ method: 'GET', url: '/api-docs-json' })).json();
    const routes = Object.entries(document.paths as Record<string, object>)
      .filter(([path]) => path.startsWith('/api/webhooks'))
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    expect(routes.sort()).toEqual([
      'DELETE /api/webhooks/{webhookId}',
      'GET /api/webhooks',
      'GET /api/webhooks/{webhookId}',
      'GET /api/webhooks/{webhookId}/deliveries',
      'POST /api/webhooks',
      'POST /api/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver',
      'POST /api/webhooks/{webhookId}/rotate-secret',
      'PUT /api/webhooks/{webhookId}',
    ]);
    const callbacks = document.paths['/api/webhooks'].post.callbacks;
    expect(Object.keys(callbacks)).toEqual([
      'record.created',
      'record.updated',
      'record.deleted',
      'record.restored',
      'record.imported',
      'record.draft_saved',
      'workflow.run.finished',
    ]);
    for (const [type, callback] of Object.entries<any>(callbacks)) {
      const post = callback['{$request.body#/url}'].post;
      const media = post.requestBody.content['application/json'];
      const schema = document.components.schemas[media.schema.$ref.split('/').pop()];
      expect([type, schema.properties.type.enum]).toEqual([type, expect.arrayContaining([type])]);
      expect(media.example.type).toBe(type);
      expect(post.parameters.map((p: { name: string }) => p.name)).toEqual([
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]);
    }
    expect(document.components.schemas.WebhookRecordEventDataDto.properties.record.allOf[0].$ref).toBe(
      '#/components/schemas/RecordDto',
    );
  });

  describe('deliveries', () => {
    it('are signed after Standard Webhooks, with the event as the body', async () => {
      const { user: alice, configId, partner: receiver } = s;
      const { id, secret } = await subscribe({});
      const { dataId } = await submit({ name: 'Ann', qty: 2 });
      const [request] = await waitFor(
        'the delivery',
        () => receiver.requests.length > 0 && receiver.requests,
      );
      expect(request.method).toBe('POST');
      expect(request.url).toBe('/hooks');
      expect(request.headers['content-type']).toBe('application/json');
      const body = verify(secret, request) as Record<string, any>;
      expect(body).toEqual(JSON.parse(request.body));
      expect(Object.keys(body)).toEqual(['type', 'timestamp', 'data']);
      expect(body.type).toBe('record.created');
      expect(body.data).toMatchObject({
        record: { _id: dataId, configId, userId: alice.user.id, data: { name: 'Ann', qty: 2 } },
        changes: { name: { after: 'Ann' }, qty: { after: 2 } },
        historyId: expect.any(Number),
      });
      expect(Math.abs(Date.parse(body.timestamp) - Date.now())).toBeLessThan(10_000);
      const timestamp = Number(request.headers['webhook-timestamp']);
      expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(10);
      // Another secret does not verify it.
      expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, request)).toThrow(
        'No matching signature found',
      );

      const [delivery] = await waitFor('sent', async () => {
        const list = await deliveries(id);
        return list[0]?.state === 'sent' && list;
      });
      expect(delivery).toMatchObject({
        eventId: request.headers['webhook-id'],
        eventType: 'record.created',
        attempts: 1,
        lastError: null,
        redeliveryOf: null,
        attemptLog: [{ attempt: 1, status: 200, error: null, response: '{"ok":true}' }],
      });
    });

    it('go only to subscriptions wanting the event type, configuration and site', async () => {
      const { t, admin, partner: receiver } = s;
      const other = await createConfig(t, admin, { title: 'Other form' });
      const siteId = await createSite(t, admin, 'Shop', 'shop.example.test');
      const all = await subscribe({
        url: receiver.url('/all'),
        events: ['record.created', 'record.updated'],
      });
      await subscribe({ url: receiver.url('/config'), configId: other });
      await subscribe({ url: receiver.url('/deleted'), events: ['record.deleted'] });
      // Created through the site's host, without a siteId: the subscription takes the host's site.
      const bySite = await createWebhook(
        t,
        admin,
        { url: receiver.url('/site'), events: ['record.created'] },
        { host: 'shop.example.test' },
      );
      expect(bySite.siteId).toBe(siteId);

      await submit({ name: 'No site', qty: 1 });
      await submit({ name: 'Shop', qty: 1 }, { host: 'shop.example.test' });
      await submit({ name: 'Other form', qty: 1 }, {}, other);

      // At least once: a receiver keeps one request per webhook-id (a slow answer may be sent twice).
      const received = () =>
        new Map(
          receiver.requests.map((r) => [
            `${r.url} ${String(r.headers['webhook-id'])}`,
            `${r.url} ${JSON.parse(r.body).data.record.data.name}`,
          ]),
        );
      await waitFor('five deliveries', () => received().size >= 5);
      await sleep(300); // anything wrongly queued would arrive meanwhile
      const got = [...received().values()].sort();
      expect(got).toEqual([
        '/all No site',
        '/all Other form',
        '/all Shop',
        '/config Other form',
        '/site Shop',
      ]);
      expect((await deliveries(all.id)).every((delivery) => delivery.state === 'sent')).toBe(true);
    });

    it('are retried on 500, 429 (Retry-After) and timeouts until one is accepted', async () => {
      const { partner: receiver } = s;
      const { id, secret } = await subscribe({});
      const answers = [500, 429, 'hang', 200];
      receiver.handle((_req, res) => {
        const answer = answers[receiver.requests.length - 1];
        if (answer === 'hang') return; // no answer within WEBHOOK_TIMEOUT_MS
        res.writeHead(answer as number, answer === 429 ? { 'retry-after': '1' } : {});
        res.end(answer === 200 ? 'thanks' : 'busy');
      });
      await submit({ name: 'Ann', qty: 1 });
      const delivery = await settledDelivery(id);
      expect(delivery.state).toBe('sent');
      expect(delivery.attempts).toBe(4);
      expect(
        delivery.attemptLog.map((a: any) => [a.attempt, a.status, a.error?.code ?? null, a.response]),
      ).toEqual([
        [1, 500, 'HTTP_STATUS', 'busy'],
        [2, 429, 'HTTP_STATUS', 'busy'],
        [3, null, 'TIMEOUT', null],
        [4, 200, null, 'thanks'],
      ]);
      // Retry-After: 1 was honoured: the third attempt came at least a second after the second.
      const [, second, third] = delivery.attemptLog.map((a: any) => Date.parse(a.at));
      expect(third - second).toBeGreaterThanOrEqual(900);
      // Every attempt carried the same id and body, each signed afresh.
      expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
      expect(new Set(receiver.requests.map((r) => r.body)).size).toBe(1);
      for (const request of receiver.requests)
        expect(verify(secret, request)).toMatchObject({ type: 'record.created' });
      expect((await webhook(id)).failingSince).toBeNull();
    });

    it('fail at once on a 4xx or a redirect (never followed)', async () => {
      const { partner: receiver } = s;
      const rejecting = await subscribe({ url: receiver.url('/reject') });
      const redirecting = await subscribe({ url: receiver.url('/redirect') });
      receiver.handle((req, res) => {
        if (req.url === '/redirect') res.writeHead(307, { location: receiver.url('/elsewhere') });
        else res.writeHead(410);
        res.end('gone');
      });
      await submit({ name: 'Ann', qty: 1 });
      const rejected = await settledDelivery(rejecting.id);
      expect(rejected).toMatchObject({
        state: 'failed',
        attempts: 1,
        lastError: { code: 'HTTP_STATUS', message: 'the receiver answered 410' },
        attemptLog: [{ status: 410, response: 'gone' }],
      });
      const redirected = await settledDelivery(redirecting.id);
      expect(redirected).toMatchObject({ state: 'failed', attempts: 1, attemptLog: [{ status: 307 }] });
      await sleep(200);
      expect(receiver.requests.map((request) => request.url).sort()).toEqual(['/redirect', '/reject']);
    });

    it('is refused by the outbound guard for a private address that is not allow-listed; nothing is sent', async () => {
      const { id } = await subscribe({ url: outsider.url('/hooks') });
      await submit({ name: 'Ann', qty: 1 });
      const delivery = await settledDelivery(id);
      expect(delivery).toMatchObject({
        state: 'failed',
        attempts: 1,
        lastError: { code: 'DESTINATION_REFUSED' },
        attemptLog: [{ status: null, error: { code: 'DESTINATION_REFUSED' } }],
      });
      expect(outsider.connections).toBe(0);
      expect(outsider.requests).toHaveLength(0);
    });

    it('are sent again on request with the same webhook-id and body (202)', async () => {
      const { t, admin, partner: receiver } = s;
      const { id, secret } = await subscribe({});
      await submit({ name: 'Ann', qty: 1 });
      const original = await settledDelivery(id);
      const response = await t.request({
        method: 'POST',
        url: `/api/webhooks/${id}/deliveries/${original.id}/redeliver`,
        token: admin,
      });
      expect(response.statusCode).toBe(202);
      expect(response.json()).toMatchObject({
        state: 'pending',
        redeliveryOf: original.id,
        eventId: original.eventId,
      });
      await waitFor('the redelivery', () => receiver.requests.length >= 2);
      const [first, again] = [receiver.requests[0], receiver.requests.at(-1)!];
      expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
      expect(again.body).toBe(first.body);
      expect(verify(secret, again)).toEqual(JSON.parse(first.body));
      const list = await waitFor('both sent', async () => {
        const all = await deliveries(id);
        return all.every((delivery) => delivery.state === 'sent') && all;
      });
      expect(list.map((delivery) => delivery.redeliveryOf)).toEqual([original.id, null]);
      // Deliveries settled before the retention's cutoff go, with their attempts; a newer one stays.
      await submit({ name: 'Newer', qty: 1 });
      await waitFor('the newer delivery', async () => (await deliveries(id)).length === 3);
      const cutoff = new Date(Date.parse(list[0].createdAt) + 1);
      expect(await t.app.get(WebhookDeliveryRetention).purge(cutoff)).toBe(2);
      const left = await deliveries(id);
      expect(left).toHaveLength(1);
      expect(left[0].eventId).not.toBe(original.eventId);

      const unknown = await t.request({
        method: 'POST',
        url: `/api/webhooks/${id}/deliveries/3fa85f64-5717-4562-b3fc-2c963f66afa6/redeliver`,
        token: admin,
      });
      expect([unknown.statusCode, unknown.json().code]).toEqual([404, 'WEBHOOK_DELIVERY_NOT_FOUND']);
    });

    it('carry both signatures during a rotation grace period, then only the new one', async () => {
      const { t, admin, partner: receiver } = s;
      const { id, secret: old } = await subscribe({});
      const rotated = await t.request({
        method: 'POST',
        url: `/api/webhooks/${id}/rotate-secret`,
        token: admin,
      });
      expect(rotated.statusCode).toBe(200);
      const { secret: fresh, previousSecretExpiresAt } = rotated.json();
      expect(fresh).toMatch(/^whsec_/);
      expect(fresh).not.toBe(old);
      expect(Date.parse(previousSecretExpiresAt) - Date.now()).toBeGreaterThan(1000);
      expect((await webhook(id)).previousSecretExpiresAt).toBe(previousSecretExpiresAt);

      await submit({ name: 'During', qty: 1 });
      const [during] = await waitFor(
        'the first delivery',
        () => receiver.requests.length >= 1 && receiver.requests,
      );
      const signatures = String(during.headers['webhook-signature']).split(' ');
      expect(signatures).toHaveLength(2);
      expect(signatures.every((signature) => signature.startsWith('v1,'))).toBe(true);
      expect(verify(fresh, during, signatures[0])).toMatchObject({ type: 'record.created' });
      expect(verify(old, during, signatures[1])).toMatchObject({ type: 'record.created' });
      expect(() => verify(old, during, signatures[0])).toThrow('No matching signature found');
      expect(() => verify(fresh, during, signatures[1])).toThrow('No matching signature found');

      await sleep(Date.parse(previousSecretExpiresAt) - Date.now() + 50);
      await submit({ name: 'After', qty: 1 });
      const after = await waitFor('the second delivery', () =>
        receiver.requests.find((request) => request.body.includes('"name":"After"')),
      );
      expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(verify(fresh, after)).toMatchObject({ data: { record: { data: { name: 'After' } } } });
      expect(() => verify(old, after)).toThrow('No matching signature found');
      expect((await webhook(id)).previousSecretExpiresAt).toBeNull();
    });

    it('disable a subscription that keeps failing; enabling it again sends what waited', async () => {
      const { t, admin, partner: receiver } = s;
      const { id } = await subscribe({});
      receiver.handle((_req, res) => {
        res.writeHead(503);
        res.end();
      });
      await submit({ name: 'Ann', qty: 1 });
      const disabled = await waitFor('disabled', async () => {
        const current = await webhook(id);
        return !current.enabled && current;
      });
      expect(disabled.disabledReason).toContain('without one success');
      expect(disabled.disabledReason).toContain('the receiver answered 503');
      expect(Date.parse(disabled.disabledAt) - Date.parse(disabled.failingSince)).toBeGreaterThanOrEqual(
        2500,
      );
      const attemptsWhenDisabled = receiver.requests.length;
      expect(attemptsWhenDisabled).toBeGreaterThan(3);

      // Nothing is sent, and nothing queued, while it is disabled.
      await submit({ name: 'Bob', qty: 1 });
      await sleep(300);
      expect(receiver.requests).toHaveLength(attemptsWhenDisabled);
      expect(await deliveries(id)).toHaveLength(1);

      receiver.handle((_req, res) => {
        res.writeHead(204);
        res.end();
      });
      const enabled = await t.request({
        method: 'PUT',
        url: `/api/webhooks/${id}`,
        token: admin,
        payload: { enabled: true },
      });
      expect(enabled.json()).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
      const sent = await settledDelivery(id);
      expect(sent.state).toBe('sent');
      expect(sent.attemptLog.at(-1)).toMatchObject({ status: 204 });
    });
  });

  describe('durability', () => {
    it('a receiver down for a while gets every event once it is back', async () => {
      const port = spare.port;
      await spare.close();
      const { id, secret } = await subscribe({ url: `http://127.0.0.1:${port}/hooks` });
      for (let i = 1; i <= 5; i++) await submit({ name: `Order ${i}`, qty: i });
      await waitFor('failed attempts', async () => {
        const all = await deliveries(id);
        return all.length === 5 && all.every((delivery) => delivery.attempts >= 3);
      });
      spare = await startHttpServer('127.0.0.1', port);
      await waitFor(
        'every event',
        () => new Set(spare.requests.map((r) => r.headers['webhook-id'])).size === 5,
      );
      const names = spare.requests.map((request) => (verify(secret, request) as any).data.record.data.name);
      expect(new Set(names)).toEqual(new Set(['Order 1', 'Order 2', 'Order 3', 'Order 4', 'Order 5']));
      const all = await waitFor('all sent', async () => {
        const list = await deliveries(id);
        return list.every((delivery) => delivery.state === 'sent') && list;
      });
      for (const delivery of all) {
        expect(delivery.attemptLog[0]).toMatchObject({ status: null, error: { code: 'NETWORK_ERROR' } });
        expect(delivery.attemptLog.at(-1)).toMatchObject({ status: 200, error: null });
      }
      expect((await webhook(id)).enabled).toBe(true);
    });
  });
});

/** Instances that die: each test boots two on one database of its own, one after the other. */
describe('webhooks across a crash', () => {
  let receiver: HttpTestServer;

  beforeAll(async () => {
    receiver = await startHttpServer();
  });
  afterAll(() => receiver.close());
  beforeEach(() => receiver.reset());

  /** Runs `test` on a database of its own (closed after it) with the environment its instances share. */
  async function onOwnDatabase(test: (database: TestDatabase, env: Record<string, string>) => Promise<void>) {
    const database = await createTestDatabase();
    try {
      await test(database, { ...TIMINGS, WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}` });
    } finally {
      await database.close();
    }
  }
  /** The first instance: the admin's token, a user, a form, and a subscription of the receiver. */
  async function firstInstance(database: TestDatabase, env: Record<string, string>) {
    const first = await createTestApp({ database, env });
    const token = await adminToken(first);
    const user = await createUser(first);
    const form = await createConfig(first, token);
    const subscription = await createWebhook(first, token, {
      url: receiver.url('/hooks'),
      events: ['record.created'],
    });
    return { first, token, user, form, subscription };
  }

  it('a crash between the change and its delivery loses nothing: the next instance sends it', () =>
    onOwnDatabase(async (database, env) => {
      // The first instance sends nothing (as if it died right after the commit).
      const { first, user, form, subscription } = await firstInstance(database, {
        ...env,
        WEBHOOK_WORKERS: '0',
      });
      const saved = await createRecord(first, user.token, form, { name: 'Kept', qty: 1 });
      await first.close();
      expect(receiver.requests).toHaveLength(0);
      const waiting = rowsOf(
        await database.client.db.execute(
          sql`select (select count(*) from domain_events) + (select count(*) from webhook_deliveries where state = 'pending') as n`,
        ),
      );
      expect(Number(waiting[0].n)).toBeGreaterThan(0);

      const second = await createTestApp({ database, env });
      try {
        const [request] = await waitFor(
          'the delivery',
          () => receiver.requests.length > 0 && receiver.requests,
        );
        expect(verify(subscription.secret, request)).toMatchObject({
          type: 'record.created',
          data: { record: { _id: saved.dataId, data: { name: 'Kept' } } },
        });
      } finally {
        await second.close();
      }
    }));

  it('a crash after the receiver accepted, before the delivery was marked sent, resends the same webhook-id', () =>
    onOwnDatabase(async (database, env) => {
      const { first, token, user, form, subscription } = await firstInstance(database, env);
      // The first request is accepted (200 sent), but its answer never ends: the instance dies reading it.
      receiver.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        if (receiver.requests.length === 1) res.write('accepted');
        else res.end('accepted again');
      });
      await createRecord(first, user.token, form, { name: 'Once', qty: 1 });
      await waitFor('the first attempt', () => receiver.requests.length === 1);
      await first.close();

      const second = await createTestApp({ database, env });
      try {
        await waitFor('the resend', () => receiver.requests.length === 2);
        const [accepted, resent] = receiver.requests;
        expect(resent.headers['webhook-id']).toBe(accepted.headers['webhook-id']);
        expect(resent.body).toBe(accepted.body);
        expect(verify(subscription.secret, resent)).toMatchObject({
          data: { record: { data: { name: 'Once' } } },
        });
        const sent = await settledOn(second, token, subscription.id);
        expect(sent).toMatchObject({ state: 'sent', attempts: 2 });
        expect(sent.attemptLog.at(-1)).toMatchObject({
          attempt: 2,
          status: 200,
          response: 'accepted again',
        });
      } finally {
        await second.close();
      }
    }));
});
