import { AppError, type FieldError } from '../common/errors/app-error';
import { containmentOf, parsePagingQuery, type PagingQuery } from './list-query.parser';

const DEFAULTS: PagingQuery = {
  page: 1,
  limit: 20,
  sort: { kind: 'column', column: 'createdAt' },
  order: 'desc',
  filters: [],
  configVersion: null,
};

/** The 422's validation errors, or the parsed query. */
function outcomeOf(query: Record<string, unknown>): PagingQuery | FieldError[] {
  try {
    return parsePagingQuery(query);
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'VALIDATION_FAILED' || error.status !== 422)
      throw error;
    return error.validationErrors!;
  }
}

describe('parsePagingQuery', () => {
  it.each<[string, Record<string, unknown>, Partial<PagingQuery>]>([
    ['nothing: page 1 of 20, newest first', {}, {}],
    ['page and limit', { page: '3', limit: '1000' }, { page: 3, limit: 1000 }],
    ['the last of a repeated parameter', { page: ['1', '2'] }, { page: 2 }],
    ['empty values as unset', { page: '', limit: '', sortBy: '', sortOrder: '' }, {}],
    [
      'a system column, ascending in any case',
      { sortBy: 'updatedAt', sortOrder: 'ASC' },
      { sort: { kind: 'column', column: 'updatedAt' }, order: 'asc' },
    ],
    ['a bare data field', { sortBy: 'qty' }, { sort: { kind: 'data', path: ['qty'] } }],
    [
      'a nested data field',
      { sortBy: 'data.address.city' },
      { sort: { kind: 'data', path: ['address', 'city'] } },
    ],
    [
      'JSON filters match exactly',
      { filters: '{"city":"Paris","qty":3,"ok":false,"gone":null}' },
      {
        filters: [
          { path: ['city'], candidates: ['Paris'] },
          { path: ['qty'], candidates: [3] },
          { path: ['ok'], candidates: [false] },
          { path: ['gone'], candidates: [null] },
        ],
      },
    ],
    [
      'query-string filters also match the number or boolean they spell',
      { 'filters[qty]': '12', 'filters[ok]': 'true', 'filters[data.a.b]': 'x', 'filters[n]': '-1.5' },
      {
        filters: [
          { path: ['qty'], candidates: ['12', 12] },
          { path: ['ok'], candidates: ['true', true] },
          { path: ['a', 'b'], candidates: ['x'] },
          { path: ['n'], candidates: ['-1.5', -1.5] },
        ],
      },
    ],
    ['other parameters are ignored', { foo: 'bar', _: '123' }, {}],
  ])('%s', (_name, query, expected) => {
    expect(outcomeOf(query)).toEqual({ ...DEFAULTS, ...expected });
  });

  const range = (field: string, min: number, max: number): FieldError => ({
    field,
    rule: 'range',
    message: `${field} must be an integer from ${min} to ${max}`,
  });
  const notJson: FieldError = { field: 'filters', rule: 'json', message: 'filters must be a JSON object' };

  it.each<[string, Record<string, unknown>, FieldError[]]>([
    ['page 0', { page: '0' }, [range('page', 1, 10_000_000)]],
    ['a limit over 1000', { limit: '1001' }, [range('limit', 1, 1000)]],
    ['a limit that is no integer', { limit: '2.5' }, [range('limit', 1, 1000)]],
    [
      'every problem at once',
      { page: 'x', limit: '0' },
      [range('page', 1, 10_000_000), range('limit', 1, 1000)],
    ],
    [
      'sortBy spliced SQL',
      { sortBy: 'name;drop table data_records' },
      [
        {
          field: 'sortBy',
          rule: 'fieldPath',
          message: 'sortBy must be createdAt, updatedAt, userId or a data field name',
        },
      ],
    ],
    [
      'sortBy through a prototype',
      { sortBy: 'data.__proto__' },
      [
        {
          field: 'sortBy',
          rule: 'fieldPath',
          message: 'sortBy must be createdAt, updatedAt, userId or a data field name',
        },
      ],
    ],
    [
      'sortOrder sideways',
      { sortOrder: 'up' },
      [{ field: 'sortOrder', rule: 'isIn', message: 'sortOrder must be asc or desc' }],
    ],
    ['filters that are not JSON', { filters: 'not-json' }, [notJson]],
    ['filters that are an array', { filters: '[1]' }, [notJson]],
    [
      'a filter value that is an object',
      { filters: '{"city":{"$gt":""}}' },
      [
        {
          field: 'filters.city',
          rule: 'scalar',
          message: 'filter values must be strings, numbers, booleans or null',
        },
      ],
    ],
    [
      'a filter key that is no field name',
      { "filters[a'b]": '1' },
      [{ field: "filters.a'b", rule: 'fieldPath', message: 'filter keys must be data field names' }],
    ],
    [
      'more than 20 filters',
      Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`filters[f${i}]`, 'x'])),
      [{ field: 'filters', rule: 'maxSize', message: 'at most 20 filters' }],
    ],
  ])('refuses %s', (_name, query, errors) => {
    expect(outcomeOf(query)).toEqual(errors);
  });
});

describe('containmentOf', () => {
  it.each<[string[], unknown, unknown]>([
    [['city'], 'Paris', { city: 'Paris' }],
    [['address', 'city'], 'Paris', { address: { city: 'Paris' } }],
    [['n'], null, { n: null }],
  ])('%j = %j contains %j', (path, value, expected) => {
    expect(containmentOf(path, value)).toEqual(expected);
  });
});
