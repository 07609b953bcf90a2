import { Logger } from '@nestjs/common';
import type { Client } from 'pg';
import { AppCache } from '../../src/common/cache/app-cache.service';
import {
  ChangeNotifications,
  NOTIFICATION_PROBE,
  PROBE_CHANNEL,
} from '../../src/database/change-notifications';
import { createTestApp } from '../utils/test-app';
import { onPostgres } from '../utils/configurations';
import { untilTrue } from '../utils/until';

/**
 * The self-check of change notifications: a notice to itself that does not come back in time
 * stops in-process keeping (one warning), and the next one that does starts it again (one line).
 * The listening session UNLISTENs the self-check's channel to have notices that really do not arrive.
 */
onPostgres('change notifications self-check (PostgreSQL)', () => {
  it('keeps nothing while its notices do not come back in time, and keeps again once they do', async () => {
    const saved = { ...NOTIFICATION_PROBE };
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const log = jest.spyOn(Logger.prototype, 'log');
    const t = await createTestApp({ env: { CACHE_ENABLED: 'false', WORKFLOW_WORKERS: '0' } });
    const count = (spy: jest.SpyInstance, pattern: RegExp) =>
      spy.mock.calls.filter(([message]) => pattern.test(String(message))).length;
    try {
      const notifications = t.app.get(ChangeNotifications);
      const cache = t.app.get(AppCache);
      await waitFor(() => notifications.connected);
      let loads = 0;
      const load = async () => ++loads;
      await cache.getOrLoad('probe-k', 60, load);
      expect(await cache.getOrLoad('probe-k', 60, load)).toBe(1);

      // The listening session stops hearing the self-check notices (as a pooled session would).
      const internals = notifications as unknown as { client: Client; startProbing(): void };
      await internals.client.query(`unlisten "${PROBE_CHANNEL}"`);
      NOTIFICATION_PROBE.intervalMs = 100;
      NOTIFICATION_PROBE.timeoutMs = 200;
      // The interval in force is the one set when listening started: restart it.
      internals.startProbing();
      await waitFor(() => !notifications.connected);
      expect(await cache.getOrLoad('probe-k', 60, load)).toBe(2);
      expect(await cache.getOrLoad('probe-k', 60, load)).toBe(3);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(count(warn, /change notifications do not arrive/)).toBe(1);

      NOTIFICATION_PROBE.timeoutMs = 2000;
      await internals.client.query(`listen "${PROBE_CHANNEL}"`);
      await waitFor(() => notifications.connected);
      expect(await cache.getOrLoad('probe-k', 60, load)).toBe(4);
      expect(await cache.getOrLoad('probe-k', 60, load)).toBe(4);
      expect(count(log, /change notifications arrive again/)).toBe(1);
    } finally {
      Object.assign(NOTIFICATION_PROBE, saved);
      warn.mockRestore();
      log.mockRestore();
      await t.close();
    }
  });
});

const waitFor = (condition: () => boolean, timeoutMs = 5000) =>
  untilTrue(condition, 'the condition', { timeoutMs, everyMs: 10 });
