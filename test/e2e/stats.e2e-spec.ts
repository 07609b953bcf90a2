import { sql } from 'drizzle-orm';
import { createUser } from '../factories/user.factory';
import { useAppSuite } from '../utils/app-suite';

/** Local midnight and Monday 00:00 of "now" in a zone, as instants (computed independently of the service). */
function zoneBoundaries(timeZone: string) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      weekday: 'short',
      hour12: false,
    })
      .formatToParts(new Date())
      .map((p) => [p.type, p.value]),
  );
  const offsetAt = (instant: Date) => {
    const local = new Date(instant.toLocaleString('en-US', { timeZone }));
    const utc = new Date(instant.toLocaleString('en-US', { timeZone: 'UTC' }));
    return local.getTime() - utc.getTime();
  };
  const localMidnightUtc = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day));
  const dayStart = new Date(localMidnightUtc - offsetAt(new Date(localMidnightUtc)));
  const weekdayIndex = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(parts.weekday);
  const mondayUtc = localMidnightUtc - weekdayIndex * 86_400_000;
  const weekStart = new Date(mondayUtc - offsetAt(new Date(mondayUtc)));
  return { dayStart, weekStart };
}

describe('statistics', () => {
  const s = useAppSuite({ users: 2, forms: [{ schema: null, validationRules: [], computedRules: [] }] });

  const insertAt = (userId: string, at: Date, active = true) =>
    s.t.database.client.db.execute(
      sql`insert into data_records (config_id, user_id, data, created_at, is_active) values (${s.configId}::uuid, ${userId}::uuid, '{}', ${at.toISOString()}::timestamptz, ${active})`,
    );
  const stats = (query = '', token = s.admin) =>
    s.t.request({ method: 'GET', url: `/api/data/${s.configId}/stats${query}`, token });

  it.each(['Europe/Budapest', 'America/Los_Angeles', 'Asia/Kolkata'])(
    'counts across the day and week boundaries of %s, Monday weeks, inactive records excluded',
    async (timeZone) => {
      const [alice, bob] = s.users;
      const { dayStart, weekStart } = zoneBoundaries(timeZone);
      const minute = 60_000;
      await insertAt(alice.user.id, new Date(dayStart.getTime() + minute)); // today
      await insertAt(alice.user.id, new Date(dayStart.getTime() - minute)); // yesterday (this week unless today is Monday)
      await insertAt(bob.user.id, new Date(weekStart.getTime() + minute)); // this week
      await insertAt(bob.user.id, new Date(weekStart.getTime() - minute)); // last week
      await insertAt(bob.user.id, new Date(dayStart.getTime() + 2 * minute), false); // deleted
      const isMonday = dayStart.getTime() === weekStart.getTime();
      const body = (await stats(`?tz=${encodeURIComponent(timeZone)}`)).json();
      expect(body).toEqual({
        total: 4,
        today: isMonday ? 2 : 1,
        thisWeek: isMonday ? 2 : 3,
        byUser: [
          { userId: [alice.user.id, bob.user.id].sort()[0], count: 2 },
          { userId: [alice.user.id, bob.user.id].sort()[1], count: 2 },
        ],
      });
    },
  );

  it('byUser is sorted by count, descending; the default zone is TIMEZONE (UTC)', async () => {
    const [alice, bob] = s.users;
    const now = new Date();
    await insertAt(bob.user.id, now);
    await insertAt(bob.user.id, now);
    await insertAt(alice.user.id, now);
    const body = (await stats()).json();
    expect(body).toMatchObject({ total: 3, today: 3, thisWeek: 3 });
    expect(body.byUser).toEqual([
      { userId: bob.user.id, count: 2 },
      { userId: alice.user.id, count: 1 },
    ]);
  });

  it('an empty form counts zeros; records without a user count in the total and under userId null', async () => {
    const [alice] = s.users;
    expect((await stats()).json()).toEqual({ total: 0, today: 0, thisWeek: 0, byUser: [] });
    await s.t.database.client.db.execute(
      sql`insert into data_records (config_id, data) values (${s.configId}::uuid, '{}'), (${s.configId}::uuid, '{}')`,
    );
    await insertAt(alice.user.id, new Date());
    expect((await stats()).json()).toEqual({
      total: 3,
      today: 3,
      thisWeek: 3,
      byUser: [
        { userId: null, count: 2 },
        { userId: alice.user.id, count: 1 },
      ],
    });
  });

  it('an unknown tz is a 422; stats need viewStats (a plain user gets 403)', async () => {
    const [alice] = s.users;
    const bad = await stats('?tz=Mars/Olympus');
    expect(bad.statusCode).toBe(422);
    expect(bad.json().validationErrors[0].field).toBe('tz');
    expect((await stats('', alice.token)).statusCode).toBe(403);
    expect((await stats('', (await createUser(s.t, { role: 'manager' })).token)).statusCode).toBe(200);
  });
});
