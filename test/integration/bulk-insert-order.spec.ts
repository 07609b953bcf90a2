import { sql, type SQL } from 'drizzle-orm';
import { RecordBulkRepository, type InsertOrder } from '../../src/data/record-bulk.repository';
import { rowsOf } from '../../src/database/raw-rows';
import { useAppSuite } from '../utils/app-suite';

/** A promise the test settles. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * Bulk inserts (an import's batches) stored side by side and still counted, and committed, in the
 * caller's order: what keeps an import's rows read a prefix of its file while two batches are
 * written at once. On the real database, PGlite and PostgreSQL (two connections).
 */
describe('bulk inserts in order', () => {
  const s = useAppSuite({ users: 1, forms: [{ schema: null, validationRules: [], computedRules: [] }] });
  const bulk = () => s.t.app.get(RecordBulkRepository);
  const db = () => s.t.database.client.db;

  beforeEach(async () => {
    // The caller's progress row: how many records each batch counted, in the order counted.
    await db().execute(
      sql`create table if not exists test_bulk_progress (id int primary key, counted int[])`,
    );
    await db().execute(sql`delete from test_bulk_progress`);
    await db().execute(sql`insert into test_bulk_progress values (1, '{}')`);
  });

  /** `count` rows named from `first` on. */
  const rows = (first: number, count: number): SQL =>
    sql`select n as row_number, json_build_object('name', 'row ' || n) as data, null::json as computed_results
      from generate_series(${first}::int, ${first + count - 1}::int) as n`;
  const progressOf = (id: number) => (inserted: SQL) =>
    sql`update test_bulk_progress set counted = counted || ${inserted} where id = ${id}`;
  const insert = (first: number, count: number, order?: InsertOrder, progressRow = 1) =>
    bulk().insertSelected(
      rows(first, count),
      { configId: s.configId, configVersion: 1, userId: s.users[0].user.id, siteId: null },
      { userId: s.users[0].user.id, origin: null },
      progressOf(progressRow),
      [],
      order,
    );
  const storedNames = async () =>
    rowsOf(
      await db().execute(
        sql`select data ->> 'name' as name from data_records where config_id = ${s.configId}::uuid order by 1`,
      ),
    ).map((row) => row.name);
  const counted = async () =>
    rowsOf(await db().execute(sql`select counted from test_bulk_progress where id = 1`))[0].counted;

  it('the later batch inserts while the earlier one is open, and counts and commits only after it', async () => {
    const firstMayCount = deferred();
    const firstBegun = deferred();
    const secondBegun = deferred();
    let secondEnded = false;
    const first = insert(1, 2, {
      begins: Promise.resolve(),
      begun: firstBegun.resolve,
      counts: firstMayCount.promise,
    });
    await firstBegun.promise;
    const second = insert(3, 3, {
      begins: firstBegun.promise,
      begun: secondBegun.resolve,
      counts: first,
    }).finally(() => (secondEnded = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(secondEnded).toBe(false);
    if (process.env.TEST_DATABASE_URL) {
      // On another connection, the second batch holds its own transaction while the first is open,
      // and neither is seen yet. (The embedded database's one connection is the first's until it
      // ends: the second, and any read, waits for it.)
      await secondBegun.promise;
      // Both have run their inserts and wait, open, to count: the inserts went side by side.
      const waitingWithInserts = async () =>
        rowsOf(
          await db().execute(sql`select count(*)::int as n from pg_stat_activity
            where datname = current_database() and state = 'idle in transaction' and query like 'with src as%'`),
        )[0].n as number;
      const deadline = Date.now() + 5000;
      while ((await waitingWithInserts()) < 2 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await waitingWithInserts()).toBe(2);
      expect(await storedNames()).toEqual([]);
    }
    firstMayCount.resolve();
    expect(await Promise.all([first, second])).toEqual([2, 3]);
    expect(await counted()).toEqual([2, 3]);
    expect(await storedNames()).toEqual(['row 1', 'row 2', 'row 3', 'row 4', 'row 5']);
  });

  it('a batch whose turn fails (the batch before it failed) keeps nothing and fails with it', async () => {
    const failure = Promise.reject(new Error('the batch before failed'));
    failure.catch(() => undefined);
    await expect(
      insert(1, 2, { begins: Promise.resolve(), begun: () => undefined, counts: failure }),
    ).rejects.toThrow('the batch before failed');
    expect(await storedNames()).toEqual([]);
    expect(await counted()).toEqual([]);
  });

  it('a batch whose progress finds no row (the import is no longer held) keeps nothing and answers 0', async () => {
    expect(await insert(1, 2, undefined, 2)).toBe(0);
    expect(await storedNames()).toEqual([]);
    expect(await insert(1, 2)).toBe(2);
    expect(await storedNames()).toEqual(['row 1', 'row 2']);
  });
});
