import { AppError } from '../../common/errors/app-error';
import { nullCharacter } from '../../common/http/body-guard';
import { lastValue } from '../../common/http/query-value';
import { isScalar, type Scalar } from '../../common/validation/scalar';

export type GridFilter =
  | { kind: 'condition'; selector: string; operator: GridOperator; value: Scalar }
  | { kind: 'not'; inner: GridFilter }
  | { kind: 'group'; connector: 'and' | 'or'; members: GridFilter[] };

const GRID_OPERATORS = [
  '=',
  '<>',
  '>',
  '>=',
  '<',
  '<=',
  'contains',
  'notcontains',
  'startswith',
  'endswith',
] as const;
export type GridOperator = (typeof GRID_OPERATORS)[number];

export interface GridSort {
  selector: string;
  desc: boolean;
}

const DATE_INTERVALS = ['year', 'quarter', 'month', 'day', 'dayOfWeek', 'hour', 'minute', 'second'] as const;
export type DateInterval = (typeof DATE_INTERVALS)[number];

export interface GridGroup {
  selector: string;
  desc: boolean;
  isExpanded: boolean;
  interval: { kind: 'number'; size: number } | { kind: 'date'; part: DateInterval } | null;
}

const SUMMARY_TYPES = ['sum', 'min', 'max', 'avg', 'count'] as const;
export interface GridSummary {
  selector: string | null;
  summaryType: (typeof SUMMARY_TYPES)[number];
}

export interface GridLoadOptions {
  skip: number;
  take: number;
  requireTotalCount: boolean;
  requireGroupCount: boolean;
  filter: GridFilter | null;
  sort: GridSort[];
  group: GridGroup[];
  totalSummary: GridSummary[];
  groupSummary: GridSummary[];
}

const CONNECTORS: Record<string, 'and' | 'or'> = {
  and: 'and',
  '&&': 'and',
  '&': 'and',
  or: 'or',
  '||': 'or',
  '|': 'or',
};

export function invalid(parameter: string, reason: string): AppError {
  return new AppError('INVALID_QUERY', { params: { parameter, reason }, details: { parameter, reason } });
}

function rawValue(query: Record<string, unknown>, name: string): string | undefined {
  const last = lastValue(query[name]);
  if (last === undefined) return undefined;
  // DevExtreme's own samples send "" for unset options; "undefined" and "null" mean the same.
  return last === '' || last === 'undefined' || last === 'null' ? undefined : last;
}

function json(query: Record<string, unknown>, name: string): unknown {
  const raw = rawValue(query, name);
  if (raw === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    return parsed === null ? undefined : parsed;
  } catch {
    throw invalid(name, 'not valid JSON');
  }
}

function nonNegativeInteger(query: Record<string, unknown>, name: string, fallback: number): number {
  const raw = rawValue(query, name);
  if (raw === undefined) return fallback;
  if (!/^\d{1,15}$/.test(raw)) throw invalid(name, 'must be a non-negative integer');
  return Number(raw);
}

function boolean(query: Record<string, unknown>, name: string): boolean {
  const raw = rawValue(query, name);
  if (raw === undefined) return false;
  const lower = raw.toLowerCase();
  if (lower !== 'true' && lower !== 'false') throw invalid(name, 'must be true or false');
  return lower === 'true';
}

function selectorOf(value: unknown, parameter: string): string {
  if (typeof value !== 'string' || value === '')
    throw invalid(parameter, 'a selector must be a non-empty string');
  return value;
}

/**
 * How deeply criteria may nest (groups and negations). A filter builder's filters are a few levels
 * deep; hundreds of levels would compile to an expression PostgreSQL refuses (stack depth).
 */
const MAX_FILTER_DEPTH = 32;

/** Parses one criterion of the filter grammar (section 6), `depth` levels down. */
function parseCriterion(node: unknown, depth: number): GridFilter {
  if (depth > MAX_FILTER_DEPTH)
    throw invalid('filter', `criteria may nest at most ${MAX_FILTER_DEPTH} levels deep`);
  if (!Array.isArray(node) || node.length === 0)
    throw invalid('filter', 'a criterion must be a non-empty array');
  if (node[0] === '!') {
    if (node.length !== 2) throw invalid('filter', 'a negation is ["!", criterion]');
    return { kind: 'not', inner: parseCriterion(node[1], depth + 1) };
  }
  if (Array.isArray(node[0])) return parseGroup(node, depth);
  if (typeof node[0] !== 'string') throw invalid('filter', 'a condition starts with a selector');
  if (node.length === 2) return condition(node[0], '=', node[1]);
  if (node.length === 3) {
    if (typeof node[1] !== 'string') throw invalid('filter', 'the operator must be a string');
    return condition(node[0], node[1], node[2]);
  }
  throw invalid('filter', 'a condition has two or three elements');
}

function condition(selector: string, operator: string, value: unknown): GridFilter {
  const op = operator.toLowerCase();
  if (!(GRID_OPERATORS as readonly string[]).includes(op))
    throw invalid('filter', `unknown operator "${operator}"`);
  if (!isScalar(value)) throw invalid('filter', 'filter values must be strings, numbers, booleans or null');
  if (typeof value === 'number' && !Number.isFinite(value)) throw invalid('filter', 'numbers must be finite');
  // A NUL cannot be in any stored string, and PostgreSQL refuses it as a parameter: the field error
  // a body gets, not a database failure.
  if (typeof value === 'string' && value.includes('\u0000'))
    throw new AppError('VALIDATION_FAILED', { validationErrors: [nullCharacter('filter')] });
  return { kind: 'condition', selector: selectorOf(selector, 'filter'), operator: op as GridOperator, value };
}

function parseGroup(node: unknown[], depth: number): GridFilter {
  const members: GridFilter[] = [];
  let connector: 'and' | 'or' | null = null;
  let expectCriterion = true;
  for (const element of node) {
    if (typeof element === 'string') {
      const found = CONNECTORS[element.toLowerCase()];
      if (!found) throw invalid('filter', `unknown connector "${element}"`);
      if (expectCriterion) throw invalid('filter', 'a connector must stand between two criteria');
      if (connector && connector !== found)
        throw invalid('filter', 'mixing of and/or is not allowed inside a single group');
      connector = found;
      expectCriterion = true;
      continue;
    }
    if (!expectCriterion) {
      // Two criteria side by side are joined by an implicit "and".
      if (connector && connector !== 'and')
        throw invalid('filter', 'mixing of and/or is not allowed inside a single group');
      connector = 'and';
    }
    members.push(parseCriterion(element, depth + 1));
    expectCriterion = false;
  }
  if (expectCriterion) throw invalid('filter', 'a group must not end with a connector');
  return members.length === 1 ? members[0] : { kind: 'group', connector: connector ?? 'and', members };
}

function parseFilter(value: unknown): GridFilter | null {
  if (value === undefined) return null;
  if (!Array.isArray(value)) throw invalid('filter', 'must be a JSON array');
  if (value.length === 0) return null;
  return parseCriterion(value, 1);
}

/**
 * How many entries each list option may hold. Every group level and sort key becomes several
 * comparator keys of one sort over the filtered records, each read out of the record's document:
 * fifteen group levels over large records held a PostgreSQL backend at 1.5 GB. A grid groups by a few
 * columns and sorts by a few more.
 */
export const MAX_LIST_ENTRIES = { group: 4, sort: 8, totalSummary: 32, groupSummary: 32 } as const;

function asArray(value: unknown, parameter: keyof typeof MAX_LIST_ENTRIES): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalid(parameter, 'must be a JSON array');
  if (value.length > MAX_LIST_ENTRIES[parameter])
    throw invalid(parameter, `at most ${MAX_LIST_ENTRIES[parameter]} entries`);
  return value;
}

function optionalBoolean(
  entry: Record<string, unknown>,
  name: string,
  parameter: string,
  fallback: boolean,
): boolean {
  const value = entry[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') throw invalid(parameter, `${name} must be a boolean`);
  return value;
}

function parseSort(value: unknown): GridSort[] {
  return asArray(value, 'sort').map((entry) => {
    if (typeof entry === 'string') return { selector: selectorOf(entry, 'sort'), desc: false };
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
      throw invalid('sort', 'entries are {selector, desc}');
    const record = entry as Record<string, unknown>;
    return {
      selector: selectorOf(record.selector, 'sort'),
      desc: optionalBoolean(record, 'desc', 'sort', false),
    };
  });
}

function parseInterval(value: unknown): GridGroup['interval'] {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' || (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value))) {
    const size = Number(value);
    if (!(size > 0) || !Number.isFinite(size))
      throw invalid('group', 'a numeric groupInterval must be positive');
    return { kind: 'number', size };
  }
  if (typeof value === 'string' && (DATE_INTERVALS as readonly string[]).includes(value)) {
    return { kind: 'date', part: value as DateInterval };
  }
  throw invalid('group', `unknown groupInterval ${JSON.stringify(value)}`);
}

function parseGroups(value: unknown): GridGroup[] {
  return asArray(value, 'group').map((entry) => {
    if (typeof entry === 'string')
      return { selector: selectorOf(entry, 'group'), desc: false, isExpanded: true, interval: null };
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
      throw invalid('group', 'entries are {selector, desc, ...}');
    const record = entry as Record<string, unknown>;
    return {
      selector: selectorOf(record.selector, 'group'),
      desc: optionalBoolean(record, 'desc', 'group', false),
      isExpanded: optionalBoolean(record, 'isExpanded', 'group', true),
      interval: parseInterval(record.groupInterval),
    };
  });
}

function parseSummaries(value: unknown, parameter: 'totalSummary' | 'groupSummary'): GridSummary[] {
  return asArray(value, parameter).map((entry) => {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
      throw invalid(parameter, 'entries are {selector, summaryType}');
    const record = entry as Record<string, unknown>;
    const type = record.summaryType;
    if (typeof type !== 'string' || !(SUMMARY_TYPES as readonly string[]).includes(type)) {
      throw invalid(parameter, `unknown summaryType ${JSON.stringify(type)}`);
    }
    if (type === 'count') return { selector: null, summaryType: 'count' };
    return {
      selector: selectorOf(record.selector, parameter),
      summaryType: type as GridSummary['summaryType'],
    };
  });
}

/** Reads the grid-library load options from the query string (docs/grid-protocol.md section 3); malformed → 400. */
export function parseGridLoadOptions(query: Record<string, unknown>): GridLoadOptions {
  return {
    skip: nonNegativeInteger(query, 'skip', 0),
    take: nonNegativeInteger(query, 'take', 0),
    requireTotalCount: boolean(query, 'requireTotalCount'),
    requireGroupCount: boolean(query, 'requireGroupCount'),
    filter: parseFilter(json(query, 'filter')),
    sort: parseSort(json(query, 'sort')),
    group: parseGroups(json(query, 'group')),
    totalSummary: parseSummaries(json(query, 'totalSummary'), 'totalSummary'),
    groupSummary: parseSummaries(json(query, 'groupSummary'), 'groupSummary'),
  };
}
