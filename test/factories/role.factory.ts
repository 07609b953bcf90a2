import type { TestApp } from '../utils/test-app';
import { bodyOf } from '../utils/expect-status';

/** Creates a custom role through the admin API (`POST /api/roles`) and returns its id; fails unless 201. */
export async function createRole(
  t: TestApp,
  adminToken: string,
  name: string,
  permissions: Record<string, string[]>,
): Promise<string> {
  const response = await t.request({
    method: 'POST',
    url: '/api/roles',
    token: adminToken,
    payload: { name, permissions },
  });
  return bodyOf<{ id: string }>(response, 201, 'role create').id;
}
