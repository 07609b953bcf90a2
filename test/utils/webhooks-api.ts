import { bodyOf } from './expect-status';
import type { TestApp } from './test-app';

/** HTTP helpers for webhook subscriptions and their deliveries, through the real routes. */

/** A subscription as its create answers it: the only answer that shows the secret. */
export type CreatedWebhook = { id: string; secret: string; siteId: string | null } & Record<string, any>;

/** Subscribes (as `token`, an admin) with `body` (`url`, `events`, ...); fails the test on anything but 201. */
export async function createWebhook(
  t: TestApp,
  token: string,
  body: Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<CreatedWebhook> {
  const response = await t.request({ method: 'POST', url: '/api/webhooks', token, headers, payload: body });
  return bodyOf(response, 201, 'webhook create');
}

/** A page of a subscription's deliveries, newest first (`query`: `?limit=100`, ...); fails on anything but 200. */
export async function webhookDeliveries(
  t: TestApp,
  token: string,
  webhookId: string,
  query = '',
): Promise<{ data: Array<Record<string, any>>; total: number }> {
  const url = `/api/webhooks/${webhookId}/deliveries${query}`;
  return bodyOf(await t.request({ method: 'GET', url, token }), 200, 'webhook deliveries');
}
