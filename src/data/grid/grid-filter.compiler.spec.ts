import { sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { createTestDatabase, type TestDatabase } from '../../../test/utils/test-database';
import { rowsOf } from '../../database/raw-rows';
import { clientInstant, compileGridFilter } from './grid-filter.compiler';
import { parseGridLoadOptions, type GridFilter } from './grid-load-options';

const filterOf = (json: unknown): GridFilter =>
  parseGridLoadOptions({ filter: JSON.stringify(json) }).filter!;
const render = (json: unknown) => new PgDialect().sqlToQuery(compileGridFilter(filterOf(json)));

describe('compileGridFilter', () => {
  // User values travel as bound parameters; selectors reach SQL only as whitelisted path literals.
  it.each<[unknown, string]>([
    [['name', 'contains', "x') or 1=1 --"], "x') or 1=1 --"],
    [['name', '=', 'Robert"; drop table data_records'], 'Robert"; drop table data_records'],
    [['name', 'startswith', '50%_off'], '50%_off'],
    [['data.a-b.c_d', '>', 'zz'], 'zz'],
  ])('binds the value of %j', (filter, bound) => {
    const { sql: text, params } = render(filter);
    expect(text).not.toContain(bound);
    expect(params).toContain(bound);
  });

  it('refuses a selector outside the whitelist (400 INVALID_QUERY)', () => {
    for (const selector of ['a;b', 'data.__proto__', "a'b", 'a b', 'data..x', 'a.b.c.d.e.f.g.h.i']) {
      expect(() => render([selector, '=', 1])).toThrow(
        expect.objectContaining({ code: 'INVALID_QUERY', status: 400 }),
      );
    }
  });

  describe('on a real database', () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase();
      const [config] = rowsOf(
        await database.client.db.execute(
          sql`insert into form_configs (title, type, preferences) values ('t', 'form', '{}') returning id`,
        ),
      );
      const records = [
        { name: 'Ann', age: 30, city: 'Paris', joined: '2024-03-01', vip: true, o: { n: 5 }, list: [7, 'x'] },
        {
          name: 'Béla',
          age: '25',
          city: 'Budapest',
          joined: '2023-12-31T23:00:00Z',
          vip: 'false',
          o: { n: ' 6 ' },
          list: { '0': 7 },
        },
        { name: 'Cecil', age: 17, city: 'paris', o: [5], list: [8] },
        { name: 'Dóra', age: null, city: 'ZÜRICH', joined: 'not a date', o: { n: [5] } },
        { name: 'Emil', o: 5 },
      ];
      for (const data of records) {
        await database.client.db.execute(
          sql`insert into data_records (config_id, data) values (${config.id as string}::uuid, ${JSON.stringify(data)}::jsonb)`,
        );
      }
    });
    afterAll(() => database.close());

    const matching = async (filter: unknown): Promise<string[]> =>
      rowsOf(
        await database.client.db.execute(
          sql`select data_records.data->>'name' as name from data_records where ${compileGridFilter(filterOf(filter))}`,
        ),
      )
        .map((row) => String(row.name))
        .sort();

    it.each<[string, unknown, string[]]>([
      ['numbers, and numeric strings as numbers', ['age', '>', 20], ['Ann', 'Béla']],
      ['a numeric string value against numbers and strings', ['data.age', '>', '20'], ['Ann', 'Béla']],
      ['= null: null and missing', ['age', '=', null], ['Dóra', 'Emil']],
      ['<> null: everything else', ['age', '<>', null], ['Ann', 'Béla', 'Cecil']],
      ['strings compare case-insensitively', ['city', '=', 'PARIS'], ['Ann', 'Cecil']],
      ['contains folds Unicode case', ['city', 'contains', 'üri'], ['Dóra']],
      ['startswith', ['name', 'startswith', 'b'], ['Béla']],
      ['endswith', ['name', 'endswith', 'IL'], ['Cecil', 'Emil']],
      ['notcontains: a missing value is ""', ['city', 'notcontains', 'par'], ['Béla', 'Dóra', 'Emil']],
      [
        'dates as instants; a stored non-date string compares as text',
        ['joined', '>=', '2024-01-01'],
        ['Ann', 'Dóra'],
      ],
      ['a boolean; the string "false" is not true', ['vip', '=', true], ['Ann']],
      ['the text "false" against a stored string', ['vip', '=', 'false'], ['Béla']],
      ['a system date column', ['createdAt', '>', '2000-01-01'], ['Ann', 'Béla', 'Cecil', 'Dóra', 'Emil']],
      ['not', ['!', ['city', '=', 'paris']], ['Béla', 'Dóra', 'Emil']],
      ['or', [['age', '<', 18], 'or', ['city', '=', 'budapest']], ['Béla', 'Cecil']],
      [
        'and',
        [
          ['city', 'contains', 'a'],
          ['age', '>=', 25],
        ],
        ['Ann', 'Béla'],
      ],
      ['an unknown root reads as null', ['other.x', '=', null], ['Ann', 'Béla', 'Cecil', 'Dóra', 'Emil']],
      ['a nested number, and a numeric string with spaces', ['data.o.n', '>', 4], ['Ann', 'Béla']],
      ['a digit segment indexes an array or names a key', ['data.list.0', '=', 7], ['Ann', 'Béla']],
      ['arrays and objects are not numbers', ['o', '>', 0], ['Emil']],
      ['a fraction', ['data.o.n', '<', 5.5], ['Ann']],
      ['<> a number keeps other types', ['data.o.n', '<>', 5], ['Béla', 'Cecil', 'Dóra', 'Emil']],
    ])('%s: %j', async (_name, filter, names) => {
      expect(await matching(filter)).toEqual(names);
    });
  });
});

describe('clientInstant', () => {
  it.each<[string, string | null]>([
    ['2021-03-15', '2021-03-15T00:00:00.000Z'],
    ['2021-03-15T10:20', '2021-03-15T10:20:00.000Z'],
    ['2021-02-30', null],
    // The stock store's spellings of a JS Date (docs/grid-protocol.md section 5), read as UTC.
    ['1/1/2020', '2020-01-01T00:00:00.000Z'],
    ['12/31/2020', '2020-12-31T00:00:00.000Z'],
    ['1/1/2021 00:00:00.000', '2021-01-01T00:00:00.000Z'],
    ['3/15/2021 13:05:09.5', '2021-03-15T13:05:09.500Z'],
    ['3/15/2021 13:05:09', '2021-03-15T13:05:09.000Z'],
    ['2/30/2021', null],
    ['13/1/2021', null],
    ['1/1/2021 24:00:00.000', null],
    ['1/1/0099', '0099-01-01T00:00:00.000Z'],
    ['1/1/20', null],
    ['1-1-2020', null],
  ])('%s', (value, expected) => {
    expect(clientInstant(value)?.toISOString() ?? null).toBe(expected);
  });
});
