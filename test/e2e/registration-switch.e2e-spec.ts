import { adminToken, createUser } from '../factories/user.factory';
import { useAppSuite } from '../utils/app-suite';
import { createTestApp, type TestApp } from '../utils/test-app';

describe('REGISTRATION_ENABLED=false: only admins create users', () => {
  let t: TestApp;
  useAppSuite((suite) => ({ t } = suite), {
    env: { REGISTRATION_ENABLED: 'false' },
    admin: false,
    seed: 'once',
  });
  beforeEach(() => t.reset());

  it.each(['/auth/register', '/api/auth/register'])('%s answers 403 REGISTRATION_DISABLED', async (url) => {
    const response = await t.request({
      method: 'POST',
      url,
      payload: { email: 'self@example.com', password: 'password-123', name: 'Self' },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({
      success: false,
      code: 'REGISTRATION_DISABLED',
      statusCode: 403,
      error: 'Self-registration is switched off on this service; ask an administrator for an account.',
    });
    const login = await t.request({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'self@example.com', password: 'password-123' },
    });
    expect(login.statusCode).toBe(401);
  });

  it('an admin creates a user with POST /api/users (201); the user logs in with that password', async () => {
    const token = await adminToken(t);
    const created = await t.request({
      method: 'POST',
      url: '/api/users',
      token,
      payload: { email: 'New@Example.com', password: 'password-123', name: 'New', role: 'manager' },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({
      id: expect.any(String),
      email: 'new@example.com',
      name: 'New',
      role: 'manager',
      siteId: null,
      isActive: true,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const login = await t.request({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'new@example.com', password: 'password-123' },
    });
    expect(login.statusCode).toBe(200);
    expect(login.json().user).toMatchObject({ email: 'new@example.com', role: 'manager' });

    const again = await t.request({
      method: 'POST',
      url: '/api/users',
      token,
      payload: { email: 'new@example.com', password: 'password-123', name: 'Again' },
    });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('EMAIL_TAKEN');
  });

  it('POST /api/users: a non-admin is 403, an unknown role or site is 422 naming the field', async () => {
    const plain = await createUser(t);
    const refused = await t.request({
      method: 'POST',
      url: '/api/users',
      token: plain.token,
      payload: { email: 'x@example.com', password: 'password-123', name: 'X' },
    });
    expect(refused.statusCode).toBe(403);

    const bad = await t.request({
      method: 'POST',
      url: '/api/users',
      token: await adminToken(t),
      payload: {
        email: 'x@example.com',
        password: 'password-123',
        name: 'X',
        role: 'nosuchrole',
        siteId: '00000000-0000-4000-8000-000000000000',
      },
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().validationErrors.map((error: { field: string }) => error.field)).toEqual([
      'role',
      'siteId',
    ]);
  });
});

describe('REGISTRATION_ENABLED defaults to true', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('register answers 201', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/auth/register',
      payload: { email: 'open@example.com', password: 'password-123', name: 'Open' },
    });
    expect(response.statusCode).toBe(201);
  });
});
