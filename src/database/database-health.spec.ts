import { createTestDatabase, type TestDatabase } from '../../test/utils/test-database';
import { DatabaseHealth } from './database-health';

describe('DatabaseHealth.settledFor', () => {
  let database: TestDatabase;
  let health: DatabaseHealth;
  beforeAll(async () => {
    // The test database (a migrated snapshot, or a server's clone): a fresh PGlite's initdb took ~12 s.
    database = await createTestDatabase();
    health = new DatabaseHealth(database.client);
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
