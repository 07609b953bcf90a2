import { sql } from 'drizzle-orm';
import { buildOnce } from '../../src/database/built-statement';
import { DatabaseClient } from '../../src/database/database-client';
import { createPostgresPool } from '../../src/database/postgres-pool';
import { onPostgres } from '../utils/configurations';
import { createTestDatabase, type TestDatabase } from '../utils/test-database';

const statement = sql`select ${sql.placeholder('n')}::int + 1 as next,
  array_length(${sql.placeholder('words')}::text[], 1) as words, ${sql.placeholder('note')}::text as note`;

describe('a statement built once (buildOnce)', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.close());

  it('runs with each call’s values: an array stays one parameter, a null stays null', async () => {
    const run = buildOnce(database.client.db, 'built_statement_test', statement);
    expect(await run({ n: 1, words: ['a', 'b', 'c'], note: null })).toEqual([
      { next: 2, words: 3, note: null },
    ]);
    expect(await run({ n: 41, words: ['x'], note: 'it’s; drop table users' })).toEqual([
      { next: 42, words: 1, note: 'it’s; drop table users' },
    ]);
  });

  onPostgres('on a PostgreSQL server', () => {
    /** The names of the statements the pool's one connection holds prepared. */
    async function preparedOn(preparedStatements: boolean): Promise<string[]> {
      const pool = createPostgresPool({ url: database.directUrl!, max: 1, preparedStatements });
      try {
        const run = buildOnce(DatabaseClient.forPool(pool, false).db, 'built_statement_test', statement);
        expect(await run({ n: 1, words: ['a'], note: 'one' })).toEqual([{ next: 2, words: 1, note: 'one' }]);
        expect(await run({ n: 2, words: [], note: 'two' })).toEqual([{ next: 3, words: null, note: 'two' }]);
        const { rows } = await pool.query('select name from pg_prepared_statements order by name');
        return rows.map((row: { name: string }) => row.name);
      } finally {
        await pool.end();
      }
    }

    it('is a named prepared statement where the pool keeps names (DATABASE_PREPARED_STATEMENTS)', async () => {
      expect(await preparedOn(true)).toEqual(['built_statement_test']);
    });

    it('is sent unnamed otherwise, as a pooler in transaction mode needs', async () => {
      expect(await preparedOn(false)).toEqual([]);
    });
  });
});
