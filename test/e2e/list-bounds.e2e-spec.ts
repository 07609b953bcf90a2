import { sql } from 'drizzle-orm';
import { createConfig } from '../factories/config.factory';
import { useAppSuite } from '../utils/app-suite';
import { errorBody } from '../utils/error-body';
import { gridQuery } from '../utils/grid-query';
import { requestAs } from '../utils/request-as';
import { RecordsRepository } from '../../src/data/records.repository';
import { parsePagingQuery } from '../../src/data/list-query.parser';

/** LIST_MAX_ROWS and LIST_MAX_BYTES bound both list forms; a stock paging grid keeps working. */
describe('list answers are bounded in rows and bytes', () => {
  const s = useAppSuite({ env: { LIST_MAX_ROWS: '5', LIST_MAX_BYTES: '2048' }, seed: 'once' });
  let small: string;
  let big: string;
  const TOO_LARGE = errorBody(
    422,
    'LIST_TOO_LARGE',
    'The answer would exceed the list limits (at most 5 records and 2048 bytes of record data); ' +
      'ask for smaller pages (take, limit) or narrow the filter.',
    { details: { maxRows: 5, maxBytes: 2048 } },
  );

  beforeAll(async () => {
    const free = { schema: null, validationRules: [], computedRules: [] };
    small = await createConfig(s.t, s.admin, free);
    big = await createConfig(s.t, s.admin, free);
    const insert = (configId: string, data: object, index: number) =>
      s.t.database.client.db.execute(
        sql`insert into data_records (config_id, data, created_at)
            values (${configId}::uuid, ${JSON.stringify(data)}::jsonb, timestamptz '2024-01-01' + ${index} * interval '1 minute')`,
      );
    for (let i = 0; i < 8; i++) await insert(small, { n: i, even: i % 2 === 0 }, i);
    // Three records of about 1,000 bytes each: two pass LIST_MAX_BYTES, one does not.
    for (let i = 0; i < 3; i++) await insert(big, { n: i, text: 'x'.repeat(1000) }, i);
  });

  const get = (configId: string, query: string) =>
    requestAs(s.t, s.admin, 'GET', `/api/data/${configId}?${query}`);
  const grid = (configId: string, params: Record<string, unknown>) => get(configId, gridQuery(params));
  const expectTooLarge = (response: { statusCode: number; json(): unknown }) => {
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(TOO_LARGE);
  };

  it('paging form: limit goes up to LIST_MAX_ROWS (422 on limit above it)', async () => {
    const response = await get(small, 'limit=6');
    expect(response.statusCode).toBe(422);
    expect(response.json().validationErrors).toEqual([
      { field: 'limit', rule: 'range', message: 'limit must be an integer from 1 to 5' },
    ]);
    const page = await get(small, 'limit=5&page=2&sortOrder=asc');
    expect(page.statusCode).toBe(200);
    expect(page.json()).toMatchObject({ total: 8, page: 2, pages: 2 });
    expect(page.json().data.map((r: { data: { n: number } }) => r.data.n)).toEqual([5, 6, 7]);
  });

  it('paging form: a page over LIST_MAX_BYTES is a 422 LIST_TOO_LARGE; smaller pages work', async () => {
    expectTooLarge(await get(big, 'limit=3'));
    const page = await get(big, 'limit=2&sortOrder=asc');
    expect(page.statusCode).toBe(200);
    expect(page.json().data.map((r: { data: { n: number } }) => r.data.n)).toEqual([0, 1]);
  });

  it('the database stops sending one record past the byte bound', async () => {
    const repository = s.t.app.get(RecordsRepository);
    const scope = { configId: big, site: { kind: 'all' as const }, ownerId: null };
    const { rows, total, tooLarge } = await repository.listPage(
      scope,
      parsePagingQuery({ limit: '3' }),
      1500,
    );
    expect({ rows: rows.length, total, tooLarge }).toEqual({ rows: 2, total: 3, tooLarge: true });
  });

  it('grid form: a stock paging grid (skip, take, requireTotalCount) works within the bounds', async () => {
    const response = await grid(small, {
      skip: 5,
      take: 5,
      requireTotalCount: 'true',
      sort: [{ selector: 'n' }],
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().totalCount).toBe(8);
    expect(response.json().data.map((r: { data: { n: number } }) => r.data.n)).toEqual([5, 6, 7]);
  });

  it('grid form: take above LIST_MAX_ROWS, or no take with more matches, is a 422 LIST_TOO_LARGE', async () => {
    expectTooLarge(await grid(small, { take: 6 }));
    expectTooLarge(await grid(small, { requireTotalCount: 'true' }));
    expectTooLarge(await grid(small, { skip: 2 }));
    // Without take, an answer within the bound is whole.
    const even = await grid(small, { filter: ['even', '=', true], requireTotalCount: 'true' });
    expect(even.statusCode).toBe(200);
    expect(even.json().data).toHaveLength(4);
    expect((await grid(small, { skip: 3 })).json().data).toHaveLength(5);
  });

  it('grid form: records over LIST_MAX_BYTES are a 422 LIST_TOO_LARGE', async () => {
    expectTooLarge(await grid(big, { take: 3 }));
    expectTooLarge(await grid(big, { requireTotalCount: 'true' }));
    expect((await grid(big, { take: 2 })).statusCode).toBe(200);
  });

  it('grid form, grouped: groups and expanded records count against the bounds', async () => {
    // Eight groups without take; three with take.
    expectTooLarge(await grid(small, { group: [{ selector: 'n', isExpanded: false }] }));
    const paged = await grid(small, {
      group: [{ selector: 'n', isExpanded: false }],
      take: 3,
      requireGroupCount: 'true',
    });
    expect(paged.statusCode).toBe(200);
    expect(paged.json().groupCount).toBe(8);
    expect(paged.json().data).toHaveLength(3);
    // Two groups holding eight records: ten rows.
    expectTooLarge(await grid(small, { group: [{ selector: 'even' }] }));
    // One group with four records: five rows.
    const one = await grid(small, { group: [{ selector: 'even' }], take: 1 });
    expect(one.statusCode).toBe(200);
    expect(one.json().data[0].items).toHaveLength(4);
    // Expanded records over the byte bound.
    expectTooLarge(await grid(big, { group: [{ selector: 'configId' }] }));
  });
});
