import { sql, type SQL } from 'drizzle-orm';
import { Client } from 'pg';
import type { PreparedStatementsMode } from '../../src/config/app-config.model';
import {
  buildOnce,
  composedOnce,
  executeParametrized,
  valuesOfBoth,
  type Parametrized,
} from '../../src/database/built-statement';
import { DatabaseClient } from '../../src/database/database-client';
import type { Database } from '../../src/database/database.types';
import { createPostgresPool, reachesServer } from '../../src/database/postgres-pool';
import { behindPooler, onPostgres } from '../utils/configurations';
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

  describe('a template and its values (executeParametrized)', () => {
    const sum = sql`select ${sql.placeholder('a')}::int + ${sql.placeholder('b')}::int as sum`;
    const withLabel = composedOnce(
      (part: SQL) => sql`select ${part} as value, ${sql.placeholder('label')}::text as label`,
    );
    const word: Parametrized = { template: sql`${sql.placeholder('word')}::text`, values: { word: 'x' } };

    it('runs each call with its own values, on the pool and in a transaction', async () => {
      const db = database.client.db;
      expect(await executeParametrized(db, { template: sum, values: { a: 1, b: 2 } })).toEqual([{ sum: 3 }]);
      expect(await executeParametrized(db, { template: sum, values: { a: 40, b: 2 } })).toEqual([
        { sum: 42 },
      ]);
      const inTransaction = await db.transaction(async (tx) => {
        await tx.execute(sql`create temporary table built_statement_tx (n int) on commit drop`);
        await executeParametrized(tx, {
          template: sql`insert into built_statement_tx values (${sql.placeholder('n')}::int)`,
          values: { n: 7 },
        });
        return executeParametrized(tx, { template: sql`select n from built_statement_tx`, values: {} });
      });
      expect(inTransaction).toEqual([{ n: 7 }]);
    });

    it('composes a part once per part object, and refuses a placeholder two parts share', async () => {
      expect(withLabel(word.template)).toBe(withLabel(word.template));
      const statement = {
        template: withLabel(word.template),
        values: valuesOfBoth({ label: 'l' }, word.values),
      };
      expect(await executeParametrized(database.client.db, statement)).toEqual([{ value: 'x', label: 'l' }]);
      expect(() => valuesOfBoth({ word: 'y' }, word.values)).toThrow('placeholder word is in two parts');
    });
  });

  onPostgres('on a PostgreSQL server', () => {
    /** The names of the statements the pool's one connection holds prepared after `work`. */
    async function preparedAfter(
      url: string,
      preparedStatements: PreparedStatementsMode,
      work: (db: Database) => Promise<void>,
    ): Promise<string[]> {
      const pool = createPostgresPool({ url, max: 1, preparedStatements });
      try {
        await work(DatabaseClient.forPool(pool, false).db);
        const { rows } = await pool.query('select name from pg_prepared_statements order by name');
        return rows.map((row: { name: string }) => row.name);
      } finally {
        await pool.end();
      }
    }

    async function runTwice(db: Database): Promise<void> {
      const run = buildOnce(db, 'built_statement_test', statement);
      expect(await run({ n: 1, words: ['a'], note: 'one' })).toEqual([{ next: 2, words: 1, note: 'one' }]);
      expect(await run({ n: 2, words: [], note: 'two' })).toEqual([{ next: 3, words: null, note: 'two' }]);
    }

    it('is a named prepared statement where the pool keeps names (DATABASE_PREPARED_STATEMENTS=true)', async () => {
      expect(await preparedAfter(database.directUrl!, true, runTwice)).toEqual(['built_statement_test']);
    });

    it('is sent unnamed with false, as a pooler in transaction mode needs', async () => {
      expect(await preparedAfter(database.directUrl!, false, runTwice)).toEqual([]);
    });

    it('is named with auto (the default) on a connection that reaches the server directly', async () => {
      expect(await preparedAfter(database.directUrl!, 'auto', runTwice)).toEqual(['built_statement_test']);
    });

    it('a template is named once: one prepared statement per template, whatever its values', async () => {
      const sum = sql`select ${sql.placeholder('a')}::int + ${sql.placeholder('b')}::int as sum`;
      const joined = sql`select ${sql.placeholder('a')}::text || ${sql.placeholder('b')}::text as joined`;
      const names = await preparedAfter(database.directUrl!, 'auto', async (db) => {
        expect(await executeParametrized(db, { template: sum, values: { a: 1, b: 2 } })).toEqual([
          { sum: 3 },
        ]);
        expect(await executeParametrized(db, { template: sum, values: { a: 40, b: 2 } })).toEqual([
          { sum: 42 },
        ]);
        expect(await executeParametrized(db, { template: joined, values: { a: 'a', b: 'b' } })).toEqual([
          { joined: 'ab' },
        ]);
      });
      expect(names).toHaveLength(2);
      for (const name of names) expect(name).toMatch(/^template_\d+$/);
    });

    it('a connection knows whether it reaches the server itself (not through a pooler)', async () => {
      expect(await reachesServerAt(database.directUrl!)).toBe(true);
    });
  });

  behindPooler('behind PgBouncer in transaction mode', () => {
    it('a connection through the pooler is told apart, so auto sends every statement unnamed', async () => {
      expect(await reachesServerAt(database.url!)).toBe(false);
      // Each run may land on another server connection: named, the second would fail there.
      const pool = createPostgresPool({ url: database.url!, max: 2, preparedStatements: 'auto' });
      try {
        const db = DatabaseClient.forPool(pool, false).db;
        const run = buildOnce(db, 'built_statement_pooled', statement);
        const runs = await Promise.all(
          Array.from({ length: 20 }, (_, n) => run({ n, words: ['w'], note: null })),
        );
        expect(runs).toEqual(Array.from({ length: 20 }, (_, n) => [{ next: n + 1, words: 1, note: null }]));
        const twice = sql`select ${sql.placeholder('n')}::int * 2 as twice`;
        const sums = await Promise.all(
          Array.from({ length: 20 }, (_, n) => executeParametrized(db, { template: twice, values: { n } })),
        );
        expect(sums).toEqual(Array.from({ length: 20 }, (_, n) => [{ twice: n * 2 }]));
      } finally {
        await pool.end();
      }
    });
  });
});

/** reachesServer of one connection to `url`. */
async function reachesServerAt(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await reachesServer(client);
  } finally {
    await client.end();
  }
}
