import { sql } from 'drizzle-orm';
import { createTestDatabase, type TestDatabase } from '../utils/test-database';

describe('database (the driver this run uses)', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.close());

  it('is migrated and folds case with Unicode rules', async () => {
    await expect(database.client.assertUnicodeCaseFolding()).resolves.toBeUndefined();
    const result: any = await database.client.db.execute(sql`select count(*)::int as n from data_records`);
    expect(result.rows[0].n).toBe(0);
  });

  it('reports which driver it is', () => {
    expect(database.client.driver).toBe(process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite');
  });
});
