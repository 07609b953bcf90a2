import { AppError } from '../../common/errors/app-error';
import { parseGridLoadOptions, type GridLoadOptions } from './grid-load-options';

const DEFAULTS: GridLoadOptions = {
  skip: 0,
  take: 0,
  requireTotalCount: false,
  requireGroupCount: false,
  filter: null,
  sort: [],
  group: [],
  totalSummary: [],
  groupSummary: [],
};

/** The INVALID_QUERY details of what parsing threw, or the parsed options. */
function outcomeOf(query: Record<string, unknown>): GridLoadOptions | { parameter: string; reason: string } {
  try {
    return parseGridLoadOptions(query);
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'INVALID_QUERY' || error.status !== 400) throw error;
    return error.details as { parameter: string; reason: string };
  }
}

describe('parseGridLoadOptions', () => {
  it.each<[string, Record<string, unknown>, Partial<GridLoadOptions>]>([
    ['nothing: the defaults', {}, {}],
    ['skip and take', { skip: '10', take: '20' }, { skip: 10, take: 20 }],
    ['the last of a repeated parameter', { skip: ['5', '7'] }, { skip: 7 }],
    ['"", "undefined" and "null" as unset', { take: '', skip: 'undefined', filter: 'null' }, {}],
    [
      'counts in any case',
      { requireTotalCount: 'TRUE', requireGroupCount: 'false' },
      { requireTotalCount: true },
    ],
    [
      'a condition',
      { filter: '["age",">",18]' },
      { filter: { kind: 'condition', selector: 'age', operator: '>', value: 18 } },
    ],
    [
      'a two-element condition means =',
      { filter: '["name","Ann"]' },
      { filter: { kind: 'condition', selector: 'name', operator: '=', value: 'Ann' } },
    ],
    [
      'operators in any case',
      { filter: '["name","CONTAINS","an"]' },
      { filter: { kind: 'condition', selector: 'name', operator: 'contains', value: 'an' } },
    ],
    [
      'a negation',
      { filter: '["!",["a","=",null]]' },
      { filter: { kind: 'not', inner: { kind: 'condition', selector: 'a', operator: '=', value: null } } },
    ],
    [
      'an or group',
      { filter: '[["a","=",1],"or",["b","<>",true]]' },
      {
        filter: {
          kind: 'group',
          connector: 'or',
          members: [
            { kind: 'condition', selector: 'a', operator: '=', value: 1 },
            { kind: 'condition', selector: 'b', operator: '<>', value: true },
          ],
        },
      },
    ],
    [
      'criteria side by side joined by and',
      { filter: '[["a","=",1],["b","=",2]]' },
      {
        filter: {
          kind: 'group',
          connector: 'and',
          members: [
            { kind: 'condition', selector: 'a', operator: '=', value: 1 },
            { kind: 'condition', selector: 'b', operator: '=', value: 2 },
          ],
        },
      },
    ],
    [
      'a group of one is its member',
      { filter: '[["a","=",1]]' },
      { filter: { kind: 'condition', selector: 'a', operator: '=', value: 1 } },
    ],
    ['an empty filter is none', { filter: '[]' }, {}],
    [
      'sort entries as names or objects',
      { sort: '["a",{"selector":"b","desc":true},{"selector":"c","desc":null}]' },
      {
        sort: [
          { selector: 'a', desc: false },
          { selector: 'b', desc: true },
          { selector: 'c', desc: false },
        ],
      },
    ],
    [
      'groups with numeric and date intervals',
      {
        group:
          '["city",{"selector":"n","groupInterval":10,"desc":true},{"selector":"d","groupInterval":"month","isExpanded":false}]',
      },
      {
        group: [
          { selector: 'city', desc: false, isExpanded: true, interval: null },
          { selector: 'n', desc: true, isExpanded: true, interval: { kind: 'number', size: 10 } },
          { selector: 'd', desc: false, isExpanded: false, interval: { kind: 'date', part: 'month' } },
        ],
      },
    ],
    [
      'summaries; count needs no selector',
      {
        totalSummary: '[{"summaryType":"count","selector":"x"},{"selector":"q","summaryType":"sum"}]',
        groupSummary: '[{"selector":"q","summaryType":"max"}]',
      },
      {
        totalSummary: [
          { selector: null, summaryType: 'count' },
          { selector: 'q', summaryType: 'sum' },
        ],
        groupSummary: [{ selector: 'q', summaryType: 'max' }],
      },
    ],
  ])('%s', (_name, query, expected) => {
    expect(outcomeOf(query)).toEqual({ ...DEFAULTS, ...expected });
  });

  it.each<[Record<string, unknown>, string, string]>([
    [{ skip: '-1' }, 'skip', 'must be a non-negative integer'],
    [{ take: '1e3' }, 'take', 'must be a non-negative integer'],
    [{ requireTotalCount: 'yes' }, 'requireTotalCount', 'must be true or false'],
    [{ filter: 'not json' }, 'filter', 'not valid JSON'],
    [{ filter: '{"a":1}' }, 'filter', 'must be a JSON array'],
    [{ filter: '["a","in",[1]]' }, 'filter', 'unknown operator "in"'],
    [{ filter: '["a","=",{"x":1}]' }, 'filter', 'filter values must be strings, numbers, booleans or null'],
    [{ filter: '["a","=",1,2]' }, 'filter', 'a condition has two or three elements'],
    [{ filter: '["!",["a","=",1],["b","=",1]]' }, 'filter', 'a negation is ["!", criterion]'],
    [{ filter: '[["a","=",1],"xor",["b","=",1]]' }, 'filter', 'unknown connector "xor"'],
    [
      { filter: '[["a","=",1],"and",["b","=",1],"or",["c","=",1]]' },
      'filter',
      'mixing of and/or is not allowed inside a single group',
    ],
    [{ filter: '[["a","=",1],"and"]' }, 'filter', 'a group must not end with a connector'],
    [{ filter: '[1]' }, 'filter', 'a condition starts with a selector'],
    [{ filter: '[[]]' }, 'filter', 'a criterion must be a non-empty array'],
    [{ sort: '[{"selector":""}]' }, 'sort', 'a selector must be a non-empty string'],
    [{ sort: '[{"selector":"a","desc":"yes"}]' }, 'sort', 'desc must be a boolean'],
    [{ sort: '{"selector":"a"}' }, 'sort', 'must be a JSON array'],
    [
      { group: '[{"selector":"a","groupInterval":"fortnight"}]' },
      'group',
      'unknown groupInterval "fortnight"',
    ],
    [{ group: '[{"selector":"a","groupInterval":0}]' }, 'group', 'a numeric groupInterval must be positive'],
    [
      { totalSummary: '[{"selector":"a","summaryType":"median"}]' },
      'totalSummary',
      'unknown summaryType "median"',
    ],
  ])('refuses %j: %s %s', (query, parameter, reason) => {
    expect(outcomeOf(query)).toEqual({ parameter, reason });
  });
});
