import { createUser } from '../factories/user.factory';
import { useAppSuite, type AppSuite } from '../utils/app-suite';
import { errorBody } from '../utils/error-body';

/** A request without a token (registration and login). */
const anonymous = (s: AppSuite, url: string, payload: object) =>
  s.t.request({ method: 'POST', url, payload });

describe('REGISTRATION_ENABLED=false: only admins create users', () => {
  const s = useAppSuite({ env: { REGISTRATION_ENABLED: 'false' } });
  /** POST /api/users as `token`. */
  const createAs = (token: string, payload: object) =>
    s.t.request({ method: 'POST', url: '/api/users', token, payload });
  const password = 'password-123';

  it.each(['/auth/register', '/api/auth/register'])('%s answers 403 REGISTRATION_DISABLED', async (url) => {
    const response = await anonymous(s, url, { email: 'self@example.com', password, name: 'Self' });
    expect(response.statusCode).toBe(403);
    const disabled =
      'Self-registration is switched off on this service; ask an administrator for an account.';
    expect(response.json()).toEqual(errorBody(403, 'REGISTRATION_DISABLED', disabled));
    const login = await anonymous(s, '/auth/login', { email: 'self@example.com', password });
    expect(login.statusCode).toBe(401);
  });

  it('an admin creates a user with POST /api/users (201); the user logs in with that password', async () => {
    const created = await createAs(s.admin, {
      email: 'New@Example.com',
      password,
      name: 'New',
      role: 'manager',
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
    const login = await anonymous(s, '/auth/login', { email: 'new@example.com', password });
    expect(login.statusCode).toBe(200);
    expect(login.json().user).toMatchObject({ email: 'new@example.com', role: 'manager' });

    const again = await createAs(s.admin, { email: 'new@example.com', password, name: 'Again' });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('EMAIL_TAKEN');
  });

  it('POST /api/users: a non-admin is 403, an unknown role or site is 422 naming the field', async () => {
    const plain = await createUser(s.t);
    const refused = await createAs(plain.token, { email: 'x@example.com', password, name: 'X' });
    expect(refused.statusCode).toBe(403);

    const bad = await createAs(s.admin, {
      email: 'x@example.com',
      password,
      name: 'X',
      role: 'nosuchrole',
      siteId: '00000000-0000-4000-8000-000000000000',
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().validationErrors.map((error: { field: string }) => error.field)).toEqual([
      'role',
      'siteId',
    ]);
  });
});

describe('REGISTRATION_ENABLED defaults to true', () => {
  const s = useAppSuite({ admin: false, seed: 'once' });

  it('register answers 201', async () => {
    const response = await anonymous(s, '/auth/register', {
      email: 'open@example.com',
      password: 'password-123',
      name: 'Open',
    });
    expect(response.statusCode).toBe(201);
  });
});
