import { request as httpRequest } from 'node:http';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/raw-rows';
import { postRecord } from '../utils/api-requests';
import { useAppSuite } from '../utils/app-suite';
import { countRows } from '../utils/row-counts';

/**
 * The CSV download on either database: on PostgreSQL the rows are written by the database (COPY), on
 * PGlite by the batch writer in JavaScript; both must give the same bytes.
 */
describe('CSV export', () => {
  const s = useAppSuite({
    users: 1,
    forms: [{ schema: null, validationRules: [], computedRules: [] }],
    listen: true,
  });

  const submit = async (payload: object) => {
    const response = await postRecord(s.t, s.user.token, s.configId, payload);
    expect(response.statusCode).toBe(201);
    return response.json<{ dataId: string; data: { createdAt: string } }>();
  };
  const csv = async (query = '') => {
    const response = await s.t.request({
      method: 'GET',
      url: `/api/data/${s.configId}/export?format=csv${query}`,
      token: s.admin,
    });
    expect(response.statusCode).toBe(200);
    return response.body;
  };
  /** The ids the rows of a CSV start with. */
  const recordIds = (text: string) =>
    text
      .split('\n')
      .slice(1)
      .map((row) => row.slice(0, 36));
  /** The spec's quoting, to write expected rows readably. */
  const line = (cells: string[]) =>
    cells.map((cell) => (/[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell)).join(',');

  /** Field name, value and expected cell; the nested ones are left out of a "scalars" record. */
  const cells: [string, unknown, string][] = [
    ['text', 'plain', 'plain'],
    ['empty', '', ''],
    ['comma', 'a,b', 'a,b'],
    ['quote', 'say "hi"', 'say "hi"'],
    ['lines', 'one\ntwo\r\nthree', 'one\ntwo\r\nthree'],
    ['spaces', ' x ', ' x '],
    ['braceText', '{not json', '{not json'],
    ['bracketText', '[1, 2]', '[1, 2]'],
    ['digitsText', '1234567890123456789012', '1234567890123456789012'],
    ['smallText', '0.0000001', '0.0000001'],
    // A string a spreadsheet would read as a formula (its first character is "-") gets a leading '.
    ['negativeText', '-0.0000001', "'-0.0000001"],
    ['unicode', 'Árvíztűrő 😀', 'Árvíztűrő 😀'],
    ['int', 42, '42'],
    ['negative', -7, '-7'],
    ['fraction', 1.5, '1.5'],
    ['big', 1e21, '1e+21'],
    ['bigger', -1.2345e25, '-1.2345e+25'],
    ['small', 1e-7, '1e-7'],
    ['smallNegative', -1.5e-7, '-1.5e-7'],
    ['edge', 0.000001, '0.000001'],
    ['large', 123456789012345680000, '123456789012345680000'],
    ['yes', true, 'true'],
    ['no', false, 'false'],
    ['nothing', null, ''],
    ['list', ['a, b', 1, null, true, { k: 'v: w' }], '["a, b",1,null,true,{"k":"v: w"}]'],
    [
      'nested',
      { b: 1, a: [1, 'x"y\\\n', null, { '10': true, '2': 1e21, x: -1e-7 }], é: 'ü' },
      // Integer-like keys first in ascending order (as JSON.parse builds the object), the others
      // in jsonb's order (shorter first).
      '{"a":[1,"x\\"y\\\\\\n",null,{"2":1e+21,"10":true,"x":-1e-7}],"b":1,"é":"ü"}',
    ],
    ['emptyList', [], '[]'],
    ['emptyObject', {}, '{}'],
  ];
  const isNested = (value: unknown) => typeof value === 'object' && value !== null;
  const everything = Object.fromEntries(cells.map(([key, value]) => [key, value]));
  const scalars = Object.fromEntries(cells.map(([key, value]) => [key, isNested(value) ? 'scalar' : value]));
  const expectedCells = (record: Record<string, unknown>) =>
    cells.map(([key, value, text]) => (record[key] === value ? text : String(record[key])));

  // Objects and arrays in the first record and in a later one (on PostgreSQL the first record is read
  // apart from the COPY).
  for (const [shape, records] of [
    ['scalars first', [scalars, everything]],
    ['objects and arrays first', [everything, scalars]],
  ] as const) {
    it(`writes every kind of value byte for byte as specified (${shape}): empty strings, quoting, numbers, nested values`, async () => {
      const saved = [];
      for (const record of records) saved.push({ record, response: await submit(record) });
      const short = await submit({ text: 'last', extra: 'not a column' });

      expect(await csv()).toBe(
        [
          line(['id', 'createdAt', ...cells.map(([key]) => key)]),
          ...saved.map(({ record, response }) =>
            line([response.dataId, response.data.createdAt, ...expectedCells(record)]),
          ),
          line([short.dataId, short.data.createdAt, 'last', ...cells.slice(1).map(() => '')]),
        ].join('\n'),
      );
    });
  }

  it('takes field names and filter values as values, never as SQL', async () => {
    const hostile = [
      "it's",
      'a"b',
      'x); drop table data_records; --',
      '$1',
      "fdws.p1')::text --",
      'back\\slash',
    ];
    const record = (note: string, n: number) =>
      Object.fromEntries([...hostile.map((key) => [key, `${key}=${note}`]), ['note', note], ['n', n]]);
    const notes = ["o'neil", '$1', "'); select pg_sleep(10); --", 'percent % and _', 'plain'];
    const ids: string[] = [];
    for (const [n, note] of notes.entries()) ids.push((await submit(record(note, n))).dataId);

    const all = await csv();
    expect(all.split('\n')[0]).toBe(line(['id', 'createdAt', ...hostile, 'note', 'n']));
    expect(recordIds(all)).toEqual(ids);
    expect(all).toContain(line([`it's=o'neil`, `a"b=o'neil`]));

    const byEquality = await csv(
      `&filters=${encodeURIComponent(JSON.stringify({ note: "'); select pg_sleep(10); --" }))}`,
    );
    expect(recordIds(byEquality)).toEqual([ids[2]]);
    const byBracket = await csv(`&filters[note]=${encodeURIComponent('$1')}`);
    expect(recordIds(byBracket)).toEqual([ids[1]]);
    const grid = JSON.stringify([
      ['data.note', 'contains', "'"],
      'or',
      [['data.note', 'startswith', '%'], 'or', ['data.n', '>=', '4']],
    ]);
    const byGrid = await csv(`&filter=${encodeURIComponent(grid)}&columns=note,n`);
    expect(byGrid.split('\n').map((row) => row.split(',').slice(2).join(','))).toEqual([
      'note,n',
      "o'neil,0",
      "'); select pg_sleep(10); --,2",
      'plain,4',
    ]);
    expect(await countRows(s.t, { records: 'data_records' })).toEqual({ records: notes.length });
  });

  it('writes records wider than one COPY statement takes (1,664 columns at most) with the batch writer', async () => {
    const keys = Array.from({ length: 1700 }, (_, index) => `field${index}`);
    const wide = await submit(
      Object.fromEntries(keys.map((key, index) => [key, index % 2 ? index : `v,${index}`])),
    );
    expect(await csv()).toBe(
      [
        line(['id', 'createdAt', ...keys]),
        line([
          wide.dataId,
          wide.data.createdAt,
          ...keys.map((_, index) => (index % 2 ? String(index) : `v,${index}`)),
        ]),
      ].join('\n'),
    );
  });

  it('returns the database connection when the client goes away mid-download', async () => {
    await s.t.database.client.db.execute(
      sql`insert into data_records (config_id, user_id, data)
          select ${s.configId}::uuid, ${s.user.user.id}::uuid,
                 jsonb_build_object('name', 'Person ' || g, 'note', repeat('x', 1000))
          from generate_series(1, 30000) g`,
    );
    const received = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(
        {
          host: '127.0.0.1',
          port: s.port,
          path: `/api/data/${s.configId}/export?format=csv`,
          headers: { authorization: `Bearer ${s.admin}` },
        },
        (response) => {
          response.once('data', (chunk: Buffer) => {
            request.destroy();
            resolve(chunk.length);
          });
        },
      );
      request.on('error', (error) => (request.destroyed ? undefined : reject(error)));
      request.end();
    });
    expect(received).toBeGreaterThan(0);

    const pool = s.t.database.client.pool;
    if (pool) {
      // PostgreSQL: the COPY is cancelled and its connection dropped, so nothing stays checked out
      // and no COPY is left running.
      await eventually(async () => {
        const running = rowsOf(
          await s.t.database.client.db.execute(
            sql`select count(*)::int as n from pg_stat_activity
                where datname = current_database() and query like 'copy (%' and state <> 'idle'`,
          ),
        );
        expect(running[0].n).toBe(0);
        expect(pool.totalCount - pool.idleCount).toBe(0);
      });
    }
    // Either way the next export is complete.
    expect((await csv()).split('\n')).toHaveLength(30_001);
  }, 60_000);
});

/** Retries `check` until it passes or `timeoutMs` is over. */
async function eventually(check: () => Promise<void>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
