import { PGlite } from '@electric-sql/pglite';
import { DatabaseClient } from './database-client';
import { DatabaseHealth } from './database-health';

describe('DatabaseHealth.settledFor', () => {
  let database: DatabaseClient;
  let health: DatabaseHealth;
  beforeAll(async () => {
    database = await DatabaseClient.forPglite(await PGlite.create());
    health = new DatabaseHealth(database);
  });
  afterAll(async () => {
    health.beforeApplicationShutdown();
    await database.close();
  });

  it('is settled while the database never went away, not while it is away, and only a while after it is back', () => {
    expect(health.settledFor(8000)).toBe(true);
    health.unavailable(new Error('connect ECONNREFUSED'));
    expect(health.settledFor(0)).toBe(false);
    health.answered();
    const back = Date.now();
    expect(health.settledFor(8000, back)).toBe(false);
    expect(health.settledFor(8000, back + 7000)).toBe(false);
    expect(health.settledFor(8000, back + 8001)).toBe(true);
  });
});
