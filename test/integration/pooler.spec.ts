import { Logger } from '@nestjs/common';
import { AppCache } from '../../src/common/cache/app-cache.service';
import { DatabaseClient } from '../../src/database/database-client';
import { ChangeNotifications, NOTIFICATION_PROBE } from '../../src/database/change-notifications';
import { createPostgresPool } from '../../src/database/postgres-pool';
import { createConfig } from '../factories/config.factory';
import { adminToken } from '../factories/user.factory';
import { requestAs, statusAs } from '../utils/request-as';
import { createTestApp } from '../utils/test-app';
import { useTwoInstances } from '../utils/two-instances';
import { createSteps, execute } from '../utils/workflow-api';
import { untilTrue } from '../utils/until';
import { behindPooler } from '../utils/configurations';

/**
 * The service behind PgBouncer in transaction mode (TEST_PGBOUNCER_URL, in front of the server of
 * TEST_DATABASE_URL; `.ci/pgbouncer-start` starts one): each transaction may get another server
 * connection, so named prepared statements and a LISTEN on a pooled connection break.
 */

behindPooler('behind PgBouncer in transaction mode', () => {
  const apps = useTwoInstances({ CACHE_ENABLED: 'false', WORKFLOW_WORKERS: '0' });
  let admin: string;
  beforeAll(async () => {
    admin = await adminToken(apps.first);
  });

  it('concurrent creates and workflow runs (the prepared writes) all succeed and are readable', async () => {
    const { first, second } = apps;
    const configId = await createConfig(first, admin);
    const workflowId = await createSteps(first, admin, [{ name: 'store', type: 'save', config: {} }]);
    const creates = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? first : second).request({
          method: 'POST',
          url: `/api/data/${configId}`,
          token: admin,
          payload: { name: `n${i}`, qty: 1 + (i % 5), ...(i % 3 ? { price: 2 } : {}) },
        }),
      ),
    );
    expect(creates.map((response) => response.statusCode)).toEqual(creates.map(() => 201));
    const runs = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        execute(i % 2 ? first : second, admin, workflowId, configId, { name: `w${i}`, qty: 1 }),
      ),
    );
    expect(runs.map((response) => [response.statusCode, response.json().status])).toEqual(
      runs.map(() => [200, 'success']),
    );
    for (const created of creates.slice(0, 10)) {
      expect(await statusAs(second, admin, 'GET', `/api/data/${configId}/${created.json().dataId}`)).toBe(
        200,
      );
    }
  });

  it('with DATABASE_LISTEN_URL, a configuration retitled on one instance is seen on the other at once', async () => {
    const { first, second } = apps;
    const configId = await createConfig(first, admin);
    await waitFor(() => second.app.get(ChangeNotifications).connected);
    const title = async () =>
      (await requestAs(second, admin, 'GET', `/api/configs/${configId}`)).json().title;
    expect(await title()).toBe('Order form');
    expect(await title()).toBe('Order form');
    const update = await requestAs(first, admin, 'PUT', `/api/configs/${configId}`, { title: 'Retitled' });
    expect(update.statusCode).toBe(200);
    await waitFor(async () => (await title()) === 'Retitled', 2000);
  });

  it('LISTEN through the pooler: notices do not arrive, which is warned once, and nothing is kept', async () => {
    const { first } = apps;
    const saved = { ...NOTIFICATION_PROBE };
    NOTIFICATION_PROBE.timeoutMs = 300;
    NOTIFICATION_PROBE.intervalMs = 500;
    const warn = jest.spyOn(Logger.prototype, 'warn');
    // The same database, LISTEN on the pooled URL (no DATABASE_LISTEN_URL).
    const pool = createPostgresPool({ url: first.database.url!, max: 4 });
    const pooledOnly = await createTestApp({
      env: { CACHE_ENABLED: 'false', WORKFLOW_WORKERS: '0' },
      database: { ...first.database, client: DatabaseClient.forPool(pool, false, null) },
    });
    try {
      const notifications = pooledOnly.app.get(ChangeNotifications);
      await waitFor(() => warn.mock.calls.some(([message]) => /do not arrive/.test(String(message))));
      expect(notifications.connected).toBe(false);
      let loads = 0;
      const cache = pooledOnly.app.get(AppCache);
      await cache.getOrLoad('pooled', 60, async () => ++loads);
      expect(await cache.getOrLoad('pooled', 60, async () => ++loads)).toBe(2);
      // A configuration retitled on another instance is read fresh here.
      const configId = await createConfig(first, admin);
      const title = async () =>
        (await requestAs(pooledOnly, admin, 'GET', `/api/configs/${configId}`)).json().title;
      expect(await title()).toBe('Order form');
      await requestAs(first, admin, 'PUT', `/api/configs/${configId}`, { title: 'Now' });
      expect(await title()).toBe('Now');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(warn.mock.calls.filter(([message]) => /do not arrive/.test(String(message)))).toHaveLength(1);
    } finally {
      Object.assign(NOTIFICATION_PROBE, saved);
      warn.mockRestore();
      await pooledOnly.close();
      await pool.end();
    }
  });
});

const waitFor = (condition: () => boolean | Promise<boolean>, timeoutMs = 5000) =>
  untilTrue(condition, 'the condition', { timeoutMs, everyMs: 20 });
