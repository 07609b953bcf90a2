import { randomBytes } from 'node:crypto';
import { TokenService } from '../../src/auth/token.service';
import { PasswordHasher } from '../../src/common/security/password-hasher';
import { UsersRepository, type UserRow } from '../../src/users/users.repository';
import type { TestApp } from '../utils/test-app';
import { bodyOf } from '../utils/expect-status';

export interface TestUser {
  user: UserRow;
  password: string;
  token: string;
}

/** Inserts a real user through the repository and issues a real token for it. */
export async function createUser(
  testApp: TestApp,
  overrides: { role?: string; email?: string; name?: string; password?: string; siteId?: string | null } = {},
): Promise<TestUser> {
  const password = overrides.password ?? 'password-123';
  const user = await testApp.app.get(UsersRepository).insertUnlessEmailTaken({
    email: overrides.email ?? `user-${randomBytes(5).toString('hex')}@example.com`,
    name: overrides.name ?? 'Test User',
    passwordHash: await testApp.app.get(PasswordHasher).hash(password),
    role: overrides.role ?? 'user',
    siteId: overrides.siteId ?? null,
  });
  if (!user) throw new Error('test user e-mail taken');
  const token = await testApp.app.get(TokenService).issue(user);
  return { user, password, token };
}

/** Logs in the seeded admin over HTTP and returns its token. */
export async function adminToken(testApp: TestApp): Promise<string> {
  const response = await testApp.request({
    method: 'POST',
    url: '/auth/login',
    payload: { email: testApp.config.adminEmail, password: testApp.config.adminPassword },
  });
  return bodyOf<{ token: string }>(response, 200, 'admin login').token;
}

/** Deactivates a user through the admin API (`PUT /api/users/:id`); fails unless it answers 200. */
export async function deactivateUser(testApp: TestApp, adminToken: string, userId: string): Promise<void> {
  const response = await testApp.request({
    method: 'PUT',
    url: `/api/users/${userId}`,
    token: adminToken,
    payload: { isActive: false },
  });
  bodyOf(response, 200, 'user deactivation');
}
