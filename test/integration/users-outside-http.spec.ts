import { UsersService } from '../../src/users/users.service';
import { useAppSuite } from '../utils/app-suite';
import { contextOf } from '../utils/user-context';

/**
 * The user service called the way a job would call it, with a context built outside HTTP: listing
 * and creating accounts are the admins' alone there too, not only behind the routes' guard.
 */
describe('the user service outside HTTP', () => {
  const s = useAppSuite({ users: [{}, { role: 'manager' }] });
  const users = () => s.t.app.get(UsersService);

  it('refuses the user list and account creation to anyone but an admin (403 FORBIDDEN)', async () => {
    for (const caller of s.users) {
      await expect(users().list(contextOf(caller.user))).rejects.toMatchObject({
        code: 'FORBIDDEN',
        status: 403,
      });
      await expect(
        users().create(contextOf(caller.user), {
          email: `made-by-${caller.user.role}@example.com`,
          name: 'Made',
          password: 'a-long-enough-password',
        }),
      ).rejects.toMatchObject({ code: 'FORBIDDEN', status: 403 });
    }
    const listed = await s.t.request({ method: 'GET', url: '/api/users', token: s.admin });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().totalCount).toBe(3);
  });
});
