import { sql } from 'drizzle-orm';
import { createConfig } from '../factories/config.factory';
import { useAppSuite } from '../utils/app-suite';
import { errorBody } from '../utils/api-error';
import { gridQuery } from '../utils/grid-query';
import { requestAs } from '../utils/request-as';

/** docs/grid-protocol.md, section by section, on data with nulls, missing fields, accents, case and both date forms. */
const PEOPLE = [
  { name: 'Anna', city: 'Zürich', age: 31, score: -4, joined: '2021-03-15', active: true },
  { name: 'béla', city: 'ZÜRICH', age: '31', score: 15, joined: '2021-03-15T00:00:00.000Z', active: false },
  { name: 'Cecil', city: 'Paris', age: 25, score: 7.5, joined: '2020-12-31T23:30:00Z' },
  { name: 'Dóra', city: 'paris', age: null, score: null, joined: 'not a date' },
  { name: 'Emil', city: 'PARIS', age: 40, joined: '2021-02-30' },
  { name: 'Feri', city: '', age: 18 },
  { name: 'Gábor' },
];

describe('grid-library list protocol', () => {
  const s = useAppSuite({ forms: [{ schema: null, validationRules: [], computedRules: [] }], seed: 'once' });
  const ids: Record<string, string> = {};
  const created: Record<string, string> = {};
  /** GET as the admin. */
  const get = (url: string) => requestAs(s.t, s.admin, 'GET', url);

  beforeAll(async () => {
    const { t, configId } = s;
    for (const [index, person] of PEOPLE.entries()) {
      const result: any = await t.database.client.db.execute(
        sql`insert into data_records (config_id, data, created_at)
            values (${configId}::uuid, ${JSON.stringify(person)}::jsonb, timestamptz '2024-01-01T00:00:00Z' + ${index} * interval '1 minute')
            returning id, created_at`,
      );
      ids[person.name] = result.rows[0].id;
      created[person.name] = new Date(result.rows[0].created_at).toISOString();
    }
    // An inactive record is invisible to every form.
    await t.database.client.db.execute(
      sql`insert into data_records (config_id, data, is_active) values (${configId}::uuid, '{"name":"Ghost","city":"Paris"}', false)`,
    );
  });

  const grid = (params: Record<string, unknown>) => get(`/api/data/${s.configId}?${gridQuery(params)}`);
  const names = async (params: Record<string, unknown>) => {
    const response = await grid(params);
    expect(response.statusCode).toBe(200);
    return response.json().data.map((record: { data: { name: string } }) => record.data.name);
  };

  describe('section 2: which form a request uses', () => {
    it('any grid parameter, even empty, selects the grid form; otherwise the paging form', async () => {
      const gridForm = (await get(`/api/data/${s.configId}?skip=&_=123`)).json();
      expect(Object.keys(gridForm)).toEqual(['data']);
      expect(gridForm.data).toHaveLength(7);
      const paging = (await get(`/api/data/${s.configId}?page=1&_=123`)).json();
      expect(paging).toMatchObject({ total: 7, page: 1, pages: 1 });
      const both = (await get(`/api/data/${s.configId}?page=2&limit=1&take=2`)).json();
      expect(both.data).toHaveLength(2);
      expect(both.total).toBeUndefined();
    });
  });

  describe('section 10: response', () => {
    it('records are returned as stored, createdAt in UTC with milliseconds, default order createdAt ascending', async () => {
      const body = (await grid({ take: 2, requireTotalCount: 'true' })).json();
      expect(body.totalCount).toBe(7);
      expect(body.data[0]).toEqual({
        _id: ids.Anna,
        configId: s.configId,
        userId: null,
        siteId: null,
        data: PEOPLE[0],
        isActive: true,
        createdAt: '2024-01-01T00:00:00.000Z',
        updatedAt: expect.any(String),
        version: 1,
        configVersion: 1,
      });
      expect(body.data[1].data).toEqual(PEOPLE[1]);
      expect(body.summary).toBeUndefined();
    });

    it('take=0 means no limit; skip pages records', async () => {
      expect(await names({ take: 0 })).toHaveLength(7);
      expect(await names({ sort: [{ selector: 'data.name' }], skip: 2, take: 3 })).toEqual([
        'Cecil',
        'Dóra',
        'Emil',
      ]);
    });
  });

  describe('sections 4-6: selectors, values and filter', () => {
    const cases: [string, unknown, string[]][] = [
      ['= folds case, keeps accents', ['data.city', '=', 'zürich'], ['Anna', 'béla']],
      ['bare name alias', ['city', '=', 'ZÜRICH'], ['Anna', 'béla']],
      ['two-element condition means =', ['data.name', 'ANNA'], ['Anna']],
      ['contains keeps accents', ['data.city', 'contains', 'zur'], []],
      ['contains folds case', ['data.city', 'contains', 'ZÜR'], ['Anna', 'béla']],
      ['<> keeps null, missing and ""', ['data.city', '<>', 'Paris'], ['Anna', 'béla', 'Feri', 'Gábor']],
      ['"" equals only ""', ['data.city', '=', ''], ['Feri']],
      ['= null matches null and missing', ['data.age', '=', null], ['Dóra', 'Gábor']],
      ['<> null', ['data.age', '<>', null], ['Anna', 'béla', 'Cecil', 'Emil', 'Feri']],
      ['numeric string against numbers', ['data.age', '=', '31'], ['Anna', 'béla']],
      ['number against numeric strings', ['data.age', '=', 31], ['Anna', 'béla']],
      ['> with coercion', ['data.age', '>', 30], ['Anna', 'béla', 'Emil']],
      ['>= null is false', ['data.age', '>=', null], []],
      ['< skips null and missing', ['data.age', '<', 30], ['Cecil', 'Feri']],
      ['date-only equals midnight UTC', ['data.joined', '=', '2021-03-15'], ['Anna', 'béla']],
      ['date-time equals date-only', ['data.joined', '=', '2021-03-15T00:00:00Z'], ['Anna', 'béla']],
      ['dates compare as instants', ['data.joined', '<', '2021-01-01'], ['Cecil']],
      [
        // Stored strings that are not dates compare with a date string as text, like any two strings.
        'a date-time without zone is UTC',
        ['data.joined', '>=', '2020-12-31T23:30'],
        ['Anna', 'béla', 'Cecil', 'Dóra', 'Emil'],
      ],
      [
        'notcontains is true for null and missing',
        ['data.city', 'notcontains', 'a'],
        ['Anna', 'béla', 'Feri', 'Gábor'],
      ],
      ['startswith', ['data.name', 'startswith', 'B'], ['béla']],
      ['endswith', ['data.name', 'endswith', 'OR'], ['Gábor']],
      ['contains on a number uses its JSON text', ['data.score', 'contains', '.5'], ['Cecil']],
      ['boolean', ['data.active', '=', true], ['Anna']],
      ['boolean against "false"', ['data.active', '=', 'false'], ['béla']],
      ['negation', ['!', ['data.city', '=', 'paris']], ['Anna', 'béla', 'Feri', 'Gábor']],
      [
        'negation brings back records excluded for nulls',
        ['!', ['data.age', '>', 20]],
        ['Dóra', 'Feri', 'Gábor'],
      ],
      ['and', [['data.age', '>', 20], 'and', ['data.city', 'contains', 'ar']], ['Cecil', 'Emil']],
      [
        'implicit and',
        [
          ['data.age', '>', 20],
          ['data.city', 'contains', 'ar'],
        ],
        ['Cecil', 'Emil'],
      ],
      [
        'or (any case, symbols too)',
        [['data.age', '>', 35], 'OR', ['data.name', '=', 'anna']],
        ['Anna', 'Emil'],
      ],
      ['|| connector', [['data.age', '>', 35], '||', ['data.name', '=', 'anna']], ['Anna', 'Emil']],
      [
        'nested groups',
        [[['data.age', '>', 35], 'or', ['data.age', '<', 20]], 'and', ['data.city', '<>', '']],
        ['Emil'],
      ],
      ['[[condition]] is the condition', [['data.name', '=', 'Anna']], ['Anna']],
      [
        'system field createdAt as an instant',
        ['createdAt', '>=', '2024-01-01T00:05:00.000Z'],
        ['Feri', 'Gábor'],
      ],
      [
        "createdAt against the store's M/D/YYYY HH:mm:ss.fff spelling",
        ['createdAt', '>=', '1/1/2024 00:05:00.000'],
        ['Feri', 'Gábor'],
      ],
      [
        'a path that does not exist reads as null',
        ['data.nothing.here', '=', null],
        PEOPLE.map((p) => p.name),
      ],
      ['unknown root reads as null', ['other.x', '=', 'a'], []],
      ['operators any case', ['data.name', 'StartsWith', 'a'], ['Anna']],
    ];
    it.each(cases)('%s', async (_title, filter, expected) => {
      expect(await names({ filter })).toEqual(expected);
    });

    it('_id selects one record', async () => {
      expect(await names({ filter: ['_id', '=', ids.Cecil] })).toEqual(['Cecil']);
    });
  });

  describe("section 5: the stock store's date spellings in filter values", () => {
    // A DataGrid with a preset filter sends these on its first load (dx.aspnet.data.js serializeDate).
    let datesConfig: string;
    beforeAll(async () => {
      datesConfig = await createConfig(s.t, s.admin, {
        schema: null,
        validationRules: [],
        computedRules: [],
      });
      const rows = [
        { name: 'old', when: '2019-06-01' },
        { name: 'spring', when: '2020-03-15T10:00:00.000Z' },
        { name: 'eve', when: '2020-12-31' },
        { name: 'new year', when: '2021-01-01T00:00:00.000Z' },
        { name: 'none' },
      ];
      for (const payload of rows) {
        const created = await requestAs(s.t, s.admin, 'POST', `/api/data/${datesConfig}`, payload);
        expect(created.statusCode).toBe(201);
      }
    });
    const filtered = async (filter: unknown) => {
      const response = await get(
        `/api/data/${datesConfig}?${gridQuery({ skip: 0, take: 20, requireTotalCount: true, filter })}`,
      );
      expect(response.statusCode).toBe(200);
      return response.json().data.map((record: { data: { name: string } }) => record.data.name);
    };

    it('>= M/D/YYYY compares as an instant', async () => {
      expect(await filtered(['data.when', '>=', '1/1/2020'])).toEqual(['spring', 'eve', 'new year']);
    });

    it('a between with M/D/YYYY and M/D/YYYY HH:mm:ss.fff bounds', async () => {
      expect(
        await filtered([['data.when', '>=', '1/1/2020'], 'and', ['data.when', '<', '1/1/2021 00:00:00.000']]),
      ).toEqual(['spring', 'eve']);
    });

    it('= with the store spelling equals every ISO spelling of the instant', async () => {
      expect(await filtered(['data.when', '=', '1/1/2021'])).toEqual(['new year']);
      expect(await filtered(['data.when', '=', '3/15/2020 10:00:00.000'])).toEqual(['spring']);
    });
  });

  describe('section 7: sort and default order', () => {
    const cases: [string, unknown, string[]][] = [
      [
        'strings lower-cased',
        [{ selector: 'data.name' }],
        ['Anna', 'béla', 'Cecil', 'Dóra', 'Emil', 'Feri', 'Gábor'],
      ],
      [
        'null first, then lower-case variant first',
        [{ selector: 'data.city', desc: false }],
        ['Gábor', 'Feri', 'Dóra', 'Cecil', 'Emil', 'Anna', 'béla'],
      ],
      [
        'descending reverses, null last',
        [{ selector: 'data.city', desc: true }],
        ['béla', 'Anna', 'Emil', 'Cecil', 'Dóra', 'Feri', 'Gábor'],
      ],
      [
        'types: null < number < string',
        ['data.age'],
        ['Dóra', 'Gábor', 'Feri', 'Cecil', 'Anna', 'Emil', 'béla'],
      ],
      [
        'dates as instants, then other strings',
        [{ selector: 'joined' }],
        ['Feri', 'Gábor', 'Cecil', 'Anna', 'béla', 'Emil', 'Dóra'],
      ],
      [
        // Anna's '2021-03-15' and béla's '2021-03-15T00:00:00.000Z' are one instant: they tie, and the
        // full record order (createdAt, then _id, always ascending) decides, not their text.
        'one instant spelled two ways ties, descending too',
        [{ selector: 'data.joined', desc: true }],
        ['Dóra', 'Emil', 'Anna', 'béla', 'Cecil', 'Feri', 'Gábor'],
      ],
      [
        'ties fall back to createdAt ascending',
        [{ selector: 'data.active', desc: true }],
        ['Anna', 'béla', 'Cecil', 'Dóra', 'Emil', 'Feri', 'Gábor'],
      ],
      [
        'several entries',
        [{ selector: 'data.city' }, { selector: 'data.name', desc: true }],
        ['Gábor', 'Feri', 'Dóra', 'Cecil', 'Emil', 'Anna', 'béla'],
      ],
    ];
    it.each(cases)('%s', async (_title, sort, expected) => {
      expect(await names({ sort })).toEqual(expected);
    });
  });

  describe('section 12: totalCount next to a page of filtered, sorted records', () => {
    const page = async (params: Record<string, unknown>) => {
      const response = await grid({ requireTotalCount: 'true', ...params });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      return {
        names: body.data.map((record: { data: { name: string } }) => record.data.name),
        total: body.totalCount,
      };
    };
    const adults = ['data.age', '>', 20];

    it('counts every filtered record, not the page', async () => {
      expect(
        await page({ filter: adults, sort: [{ selector: 'data.score', desc: true }], skip: 1, take: 2 }),
      ).toEqual({
        names: ['Cecil', 'Anna'],
        total: 4,
      });
    });

    it('still counts when skip is past the last record', async () => {
      expect(await page({ filter: adults, skip: 10, take: 2 })).toEqual({ names: [], total: 4 });
      expect(await page({ filter: ['data.name', '=', 'nobody'], skip: 0, take: 2 })).toEqual({
        names: [],
        total: 0,
      });
    });

    it('system fields sort too: createdAt descending, _id', async () => {
      expect(await page({ filter: adults, sort: [{ selector: 'createdAt', desc: true }] })).toEqual({
        names: ['Emil', 'Cecil', 'béla', 'Anna'],
        total: 4,
      });
      const byId = Object.entries(ids)
        .filter(([name]) => ['Anna', 'béla', 'Cecil', 'Emil'].includes(name))
        .sort(([, a], [, b]) => (a < b ? -1 : 1))
        .map(([name]) => name);
      expect(await page({ filter: adults, sort: ['_id'], take: 0 })).toEqual({ names: byId, total: 4 });
    });

    it('without a filter the total is the whole record set', async () => {
      expect(await page({ sort: [{ selector: 'data.age', desc: true }], take: 3 })).toEqual({
        names: ['béla', 'Emil', 'Anna'],
        total: 7,
      });
    });
  });

  describe('section 9: summaries', () => {
    it('count, sum, avg, min and max by the comparator, returned as stored', async () => {
      const body = (
        await grid({
          take: 1,
          totalSummary: [
            { summaryType: 'count' },
            { selector: 'data.score', summaryType: 'sum' },
            { selector: 'data.score', summaryType: 'avg' },
            { selector: 'data.age', summaryType: 'min' },
            { selector: 'data.age', summaryType: 'max' },
            { selector: 'data.joined', summaryType: 'min' },
            { selector: 'data.city', summaryType: 'max' },
          ],
        })
      ).json();
      expect(body.summary).toEqual([7, 18.5, 18.5 / 3, 18, '31', '2020-12-31T23:30:00Z', 'ZÜRICH']);
      expect(body.data).toHaveLength(1);
    });

    it('an empty set sums to 0; avg, min and max are null; count 0', async () => {
      const body = (
        await grid({
          filter: ['data.name', '=', 'nobody'],
          requireTotalCount: 'TRUE',
          totalSummary: [
            { summaryType: 'count', selector: 'ignored' },
            { selector: 'data.score', summaryType: 'sum' },
            { selector: 'data.score', summaryType: 'avg' },
            { selector: 'data.score', summaryType: 'min' },
            { selector: 'data.score', summaryType: 'max' },
          ],
        })
      ).json();
      expect(body).toEqual({ data: [], totalCount: 0, summary: [0, 0, null, null, null] });
    });
  });

  describe('section 8: grouping', () => {
    it('keys are exact and ordered by the comparator; count on every group; groupCount', async () => {
      const body = (
        await grid({
          group: [{ selector: 'data.city' }],
          requireGroupCount: 'true',
          requireTotalCount: 'true',
        })
      ).json();
      expect(body.groupCount).toBe(7);
      expect(body.totalCount).toBe(7);
      expect(body.data.map((g: any) => g.key)).toEqual([
        null,
        '',
        'paris',
        'Paris',
        'PARIS',
        'Zürich',
        'ZÜRICH',
      ]);
      expect(body.data.map((g: any) => g.count)).toEqual([1, 1, 1, 1, 1, 1, 1]);
      expect(body.data[2].items.map((r: any) => r.data.name)).toEqual(['Dóra']);
      expect(body.data[0].summary).toBeUndefined();
    });

    it('desc reverses group order; isExpanded false gives items null', async () => {
      const body = (await grid({ group: [{ selector: 'data.city', desc: true, isExpanded: false }] })).json();
      expect(body.data.map((g: any) => g.key)).toEqual([
        'ZÜRICH',
        'Zürich',
        'PARIS',
        'Paris',
        'paris',
        '',
        null,
      ]);
      expect(body.data.every((g: any) => g.items === null && g.count === 1)).toBe(true);
      expect(body.groupCount).toBeUndefined();
    });

    it('numeric intervals truncate toward zero like JS %; non-numbers have key null', async () => {
      const score = (
        await grid({ group: [{ selector: 'data.score', groupInterval: 10, isExpanded: false }] })
      ).json();
      expect(score.data.map((g: any) => [g.key, g.count])).toEqual([
        [null, 4],
        [0, 2],
        [10, 1],
      ]);
      const age = (
        await grid({ group: [{ selector: 'data.age', groupInterval: '10', isExpanded: false }] })
      ).json();
      expect(age.data.map((g: any) => [g.key, g.count])).toEqual([
        [null, 3],
        [10, 1],
        [20, 1],
        [30, 1],
        [40, 1],
      ]);
    });

    it('date intervals use the UTC instant; month is 1-based, dayOfWeek 0 = Sunday', async () => {
      const keys = async (groupInterval: string) =>
        (await grid({ group: [{ selector: 'data.joined', groupInterval, isExpanded: false }] }))
          .json()
          .data.map((g: any) => [g.key, g.count]);
      expect(await keys('year')).toEqual([
        [null, 4],
        [2020, 1],
        [2021, 2],
      ]);
      expect(await keys('month')).toEqual([
        [null, 4],
        [3, 2],
        [12, 1],
      ]);
      expect(await keys('quarter')).toEqual([
        [null, 4],
        [1, 2],
        [4, 1],
      ]);
      expect(await keys('dayOfWeek')).toEqual([
        [null, 4],
        [1, 2],
        [4, 1],
      ]);
      expect(await keys('hour')).toEqual([
        [null, 4],
        [0, 2],
        [23, 1],
      ]);
    });

    it('nested levels with counts of records and group summaries at every level', async () => {
      const body = (
        await grid({
          group: [{ selector: 'data.active' }, { selector: 'data.city', isExpanded: false }],
          groupSummary: [{ summaryType: 'count' }, { selector: 'data.score', summaryType: 'sum' }],
        })
      ).json();
      expect(body.data.map((g: any) => [g.key, g.count, g.summary])).toEqual([
        [null, 5, [5, 7.5]],
        [false, 1, [1, 15]],
        [true, 1, [1, -4]],
      ]);
      expect(body.data[0].items).toEqual([
        { key: null, count: 1, items: null, summary: [1, 0] },
        { key: '', count: 1, items: null, summary: [1, 0] },
        { key: 'paris', count: 1, items: null, summary: [1, 0] },
        { key: 'Paris', count: 1, items: null, summary: [1, 7.5] },
        { key: 'PARIS', count: 1, items: null, summary: [1, 0] },
      ]);
    });

    it('expanded last level lists records in full record order', async () => {
      const body = (
        await grid({ group: [{ selector: 'data.active' }], sort: [{ selector: 'data.name', desc: true }] })
      ).json();
      expect(body.data[0].items.map((r: any) => r.data.name)).toEqual([
        'Gábor',
        'Feri',
        'Emil',
        'Dóra',
        'Cecil',
      ]);
    });

    it('skip and take page top-level groups; counts and summaries are computed before paging', async () => {
      const body = (
        await grid({
          group: [{ selector: 'data.city' }],
          skip: 1,
          take: 2,
          requireGroupCount: 'true',
          requireTotalCount: 'true',
          totalSummary: [{ summaryType: 'count' }],
        })
      ).json();
      expect(body.data.map((g: any) => g.key)).toEqual(['', 'paris']);
      expect(body.data[1].items.map((r: any) => r.data.name)).toEqual(['Dóra']);
      expect(body).toMatchObject({ groupCount: 7, totalCount: 7, summary: [7] });
    });

    it('groupSummary without group is ignored; grouping an empty result gives no groups', async () => {
      const ignored = (await grid({ take: 1, groupSummary: [{ summaryType: 'count' }] })).json();
      expect(ignored.data[0]._id).toBe(ids.Anna);
      const empty = (
        await grid({
          filter: ['data.name', '=', 'x'],
          group: [{ selector: 'data.city' }],
          requireGroupCount: 'true',
        })
      ).json();
      expect(empty).toEqual({ data: [], groupCount: 0 });
    });
  });

  describe('section 11: errors are 400 in the error body', () => {
    const cases: [string, Record<string, unknown>][] = [
      ['invalid JSON', { filter: '[a' }],
      ['mixed and/or', { filter: [['data.a', '=', 1], 'and', ['data.b', '=', 2], 'or', ['data.c', '=', 3]] }],
      [
        'implicit and after or',
        { filter: [['data.a', '=', 1], 'or', ['data.b', '=', 2], ['data.c', '=', 3]] },
      ],
      ['in is not a wire operator', { filter: ['data.a', 'in', [1, 2]] }],
      ['unknown operator', { filter: ['data.a', 'like', 'x'] }],
      ['object value (operator injection)', { filter: ['data.a', '=', { $gt: 0 }] }],
      ['bad selector', { filter: ['data.$where', '=', 1] }],
      ['prototype selector', { filter: ['data.__proto__.x', '=', 1] }],
      ['selector with SQL', { filter: ["data.a') or 1=1 --", '=', 1] }],
      ['group ending with a connector', { filter: [['data.a', '=', 1], 'and'] }],
      ['two connectors in a row', { filter: [['data.a', '=', 1], 'and', 'or', ['data.b', '=', 1]] }],
      ['empty nested array', { filter: [[], 'and', ['data.a', '=', 1]] }],
      ['unknown connector', { filter: [['data.a', '=', 1], 'xor', ['data.b', '=', 1]] }],
      ['negative skip', { skip: '-1' }],
      ['non-integer take', { take: '1.5' }],
      ['requireTotalCount not boolean', { requireTotalCount: 'yes' }],
      ['requireGroupCount not boolean', { requireGroupCount: '1' }],
      ['sort not an array', { sort: { selector: 'data.a' } }],
      ['desc not boolean', { sort: [{ selector: 'data.a', desc: 'yes' }] }],
      ['unknown summaryType', { totalSummary: [{ selector: 'data.a', summaryType: 'median' }] }],
      ['summary without selector', { totalSummary: [{ summaryType: 'sum' }] }],
      ['unknown groupInterval', { group: [{ selector: 'data.a', groupInterval: 'week' }] }],
      ['isExpanded not boolean', { group: [{ selector: 'data.a', isExpanded: 'no' }] }],
    ];
    it.each(cases)('%s', async (_title, params) => {
      const response = await grid(params);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ success: false, code: 'INVALID_QUERY', statusCode: 400 });
      expect(response.json().error).toMatch(/^The query parameter \w+ is not valid: /);
    });

    const refusal = (reason: string) =>
      errorBody(400, {
        code: 'INVALID_QUERY',
        error: `The query parameter filter is not valid: ${reason}`,
        details: { parameter: 'filter', reason },
      });

    it('a date before year 1 or after 9999 (year 0, or a zone offset crossing the end) is a 400', async () => {
      for (const value of ['0000-01-01', '1/1/0000', '0001-01-01T00:30+01:00', '9999-12-31T23:00-05:00']) {
        for (const operator of ['=', '>', '<>']) {
          const response = await grid({ filter: ['data.joined', operator, value] });
          expect({ value, operator, status: response.statusCode }).toEqual({ value, operator, status: 400 });
          expect(response.json()).toEqual(refusal('dates must fall in the years 1 to 9999'));
        }
      }
      // The first and the last day of the range are still dates.
      expect(await names({ filter: ['data.joined', '=', '0001-01-01'] })).toEqual([]);
      expect(await names({ filter: ['data.joined', '=', '12/31/9999'] })).toEqual([]);
    });

    it('a filter nested deeper than 32 levels is a 400, 32 levels still work', async () => {
      const nest = (depth: number, leaf: unknown): unknown =>
        depth <= 1 ? leaf : ['!', nest(depth - 1, leaf)];
      const groups = (depth: number): unknown =>
        depth <= 1 ? ['data.name', '=', 'Anna'] : [groups(depth - 1), 'and', ['data.age', '>', 0]];
      for (const filter of [
        nest(500, ['data.name', '=', 'Anna']),
        groups(500),
        nest(33, ['data.name', '=', 'Anna']),
      ]) {
        const response = await grid({ filter, skip: 0, take: 10 });
        expect(response.statusCode).toBe(400);
        expect(response.json()).toEqual(refusal('criteria may nest at most 32 levels deep'));
      }
      // 31 negations around a condition are 32 levels, and an odd number of them is one negation.
      expect(await names({ filter: nest(32, ['data.name', '=', 'Anna']) })).toEqual(
        await names({ filter: ['!', ['data.name', '=', 'Anna']] }),
      );
      expect(await names({ filter: groups(32) })).toEqual(['Anna']);
    });

    it('more than 4 group levels or 8 sort keys is a 400 before any query; 4 and 8 still work', async () => {
      const fields = ['data.name', 'data.city', 'data.age', 'data.active', 'data.joined', 'data.score'];
      const selectors = (count: number) =>
        Array.from({ length: count }, (_, index) => ({ selector: fields[index % fields.length] }));
      for (const [parameter, count, max] of [
        ['group', 5, 4],
        ['group', 15, 4],
        ['sort', 9, 8],
      ] as const) {
        const response = await grid({ [parameter]: selectors(count), take: 10 });
        expect(response.statusCode).toBe(400);
        const reason = `at most ${max} entries`;
        expect(response.json()).toEqual(
          errorBody(400, {
            code: 'INVALID_QUERY',
            error: `The query parameter ${parameter} is not valid: ${reason}`,
            details: { parameter, reason },
          }),
        );
      }
      expect((await grid({ group: selectors(4), take: 10 })).statusCode).toBe(200);
      expect(await names({ sort: selectors(8) })).toHaveLength(7);
    });

    it('nothing changed after the injection attempts', async () => {
      expect((await grid({ requireTotalCount: 'true', take: 1 })).json().totalCount).toBe(7);
    });
  });
});
