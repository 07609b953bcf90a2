import type { TestApp } from '../utils/test-app';

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
  if (response.statusCode !== 201)
    throw new Error(`site create failed: ${response.statusCode} ${response.body}`);
  return response.json().id as string;
}
