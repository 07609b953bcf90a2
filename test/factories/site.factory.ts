import type { TestApp } from '../utils/test-app';
import { bodyOf } from '../utils/expect-status';

/** Creates a site answering on `domain` through the admin API and returns its id. */
export async function createSite(
  t: TestApp,
  adminToken: string,
  name: string,
  domain: string,
): Promise<string> {
  const response = await t.request({
    method: 'POST',
    url: '/api/sites',
    token: adminToken,
    payload: { name, domains: [domain] },
  });
  return bodyOf<{ id: string }>(response, 201, 'site create').id;
}
