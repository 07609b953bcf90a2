import { AppError, type FieldError } from '../common/errors/app-error';
import { nullCharacter } from '../common/http/body-guard';
import { MAX_PAGE } from '../common/http/list-page';
import { lastValue } from '../common/http/query-value';
import { parseFieldPath } from '../common/validation/field-path';
import { isScalar } from '../common/validation/scalar';

export type SortKey =
  { kind: 'column'; column: 'createdAt' | 'updatedAt' | 'userId' } | { kind: 'data'; path: string[] };

/** One equality filter: the record matches when `data` contains any of the candidate objects. */
export interface EqualityFilter {
  path: string[];
  candidates: unknown[];
}

export interface PagingQuery {
  page: number;
  limit: number;
  sort: SortKey;
  order: 'asc' | 'desc';
  filters: EqualityFilter[];
  /** Only records last validated against this configuration version (`configVersion=n`). */
  configVersion: number | null;
}

const SYSTEM_SORT_FIELDS = new Set(['createdAt', 'updatedAt', 'userId']);
const MAX_FILTERS = 20;
type RawQuery = Record<string, unknown>;

function integer(
  raw: string | undefined,
  fallback: number,
  min: number,
  max: number,
  field: string,
  errors: FieldError[],
) {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    errors.push({ field, rule: 'range', message: `${field} must be an integer from ${min} to ${max}` });
    return fallback;
  }
  return Number(raw);
}

/** A query-string value from `filters[x]=v`: the string, and the number or boolean it spells. */
function candidatesOfText(text: string): unknown[] {
  const candidates: unknown[] = [text];
  if (/^-?\d+(\.\d+)?$/.test(text) && Number.isFinite(Number(text))) candidates.push(Number(text));
  if (text === 'true' || text === 'false') candidates.push(text === 'true');
  return candidates;
}

/** `deleted=true` lists the trash; absent, empty or `false` the active records; anything else is a 422. */
export function parseDeletedFlag(query: RawQuery): boolean {
  const raw = lastValue(query.deleted);
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new AppError('VALIDATION_FAILED', {
    validationErrors: [{ field: 'deleted', rule: 'isBoolean', message: 'deleted must be true or false' }],
  });
}

/** Submitted records (the default) or drafts (README "Drafts"). */
export type RecordStatus = 'submitted' | 'draft';

/**
 * `status=draft` reads drafts instead of submitted records (list, grid, export, statistics);
 * absent, empty or `submitted` the submitted ones; anything else is a 422.
 */
export function parseStatusFilter(query: RawQuery): RecordStatus {
  const raw = lastValue(query.status);
  if (raw === undefined || raw === '' || raw === 'submitted') return 'submitted';
  if (raw === 'draft') return 'draft';
  throw new AppError('VALIDATION_FAILED', {
    validationErrors: [{ field: 'status', rule: 'isIn', message: 'status must be submitted or draft' }],
  });
}

/**
 * `configVersion=n`: only records last validated against version n of their configuration; absent
 * or empty, every version; anything but an integer from 1 is a 422.
 */
export function parseConfigVersionFilter(query: RawQuery): number | null {
  const errors: FieldError[] = [];
  const version = integer(lastValue(query.configVersion), 0, 1, 2_147_483_647, 'configVersion', errors);
  if (errors.length > 0) throw new AppError('VALIDATION_FAILED', { validationErrors: errors });
  return version === 0 ? null : version;
}

/** `page` (from 1) and `limit` (1..maxLimit, 20 by default) of a paged list; bad ones are a 422. */
export function parsePageQuery(query: RawQuery, maxLimit = 1000): { page: number; limit: number } {
  const errors: FieldError[] = [];
  const paging = pageOf(query, maxLimit, errors);
  if (errors.length > 0) throw new AppError('VALIDATION_FAILED', { validationErrors: errors });
  return paging;
}

function pageOf(query: RawQuery, maxLimit: number, errors: FieldError[]) {
  return {
    page: integer(lastValue(query.page), 1, 1, MAX_PAGE, 'page', errors),
    limit: integer(lastValue(query.limit), Math.min(20, maxLimit), 1, maxLimit, 'limit', errors),
  };
}

/**
 * Reads the paging form of the list (`page`, `limit` up to `maxLimit`, `sortBy`, `sortOrder`,
 * `filters` as a JSON object or as `filters[x]=v`). Unknown parameters are ignored; bad ones are a
 * 422 naming them.
 */
export function parsePagingQuery(query: RawQuery, maxLimit = 1000): PagingQuery {
  const errors: FieldError[] = [];
  const { page, limit } = pageOf(query, maxLimit, errors);

  const sortBy = lastValue(query.sortBy) || 'createdAt';
  let sort: SortKey = { kind: 'column', column: 'createdAt' };
  if (SYSTEM_SORT_FIELDS.has(sortBy)) {
    sort = { kind: 'column', column: sortBy as 'createdAt' };
  } else {
    const path = parseFieldPath(sortBy.startsWith('data.') ? sortBy.slice(5) : sortBy);
    if (path) sort = { kind: 'data', path };
    else
      errors.push({
        field: 'sortBy',
        rule: 'fieldPath',
        message: 'sortBy must be createdAt, updatedAt, userId or a data field name',
      });
  }

  const sortOrder = (lastValue(query.sortOrder) || 'desc').toLowerCase();
  if (sortOrder !== 'asc' && sortOrder !== 'desc') {
    errors.push({ field: 'sortOrder', rule: 'isIn', message: 'sortOrder must be asc or desc' });
  }

  const filters: EqualityFilter[] = [];
  const addFilter = (key: string, candidates: unknown[]) => {
    const path = parseFieldPath(key.startsWith('data.') ? key.slice(5) : key);
    if (!path) {
      errors.push({
        field: `filters.${key.slice(0, 50)}`,
        rule: 'fieldPath',
        message: 'filter keys must be data field names',
      });
      return;
    }
    filters.push({ path, candidates });
  };
  const jsonFilters = lastValue(query.filters);
  if (jsonFilters !== undefined && jsonFilters !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(jsonFilters);
    } catch {
      errors.push({ field: 'filters', rule: 'json', message: 'filters must be a JSON object' });
    }
    if (parsed !== undefined) {
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        errors.push({ field: 'filters', rule: 'json', message: 'filters must be a JSON object' });
      } else {
        for (const [key, value] of Object.entries(parsed)) {
          if (!isScalar(value)) {
            errors.push({
              field: `filters.${key.slice(0, 50)}`,
              rule: 'scalar',
              message: 'filter values must be strings, numbers, booleans or null',
            });
          } else if (typeof value === 'string' && value.includes('\u0000')) {
            errors.push(nullCharacter(`filters.${key.slice(0, 50)}`));
          } else addFilter(key, [value]);
        }
      }
    }
  }
  for (const [key, value] of Object.entries(query)) {
    const match = /^filters\[(.*)\]$/.exec(key);
    if (match) addFilter(match[1], candidatesOfText(lastValue(value) ?? ''));
  }
  if (filters.length > MAX_FILTERS) {
    errors.push({ field: 'filters', rule: 'maxSize', message: `at most ${MAX_FILTERS} filters` });
  }
  if (errors.length > 0) throw new AppError('VALIDATION_FAILED', { validationErrors: errors });
  const configVersion = parseConfigVersionFilter(query);
  return { page, limit, sort, order: sortOrder as 'asc' | 'desc', filters, configVersion };
}

/** `{"a":{"b":value}}` for the path `a.b`: the shape `data @> ...` matches. */
export function containmentOf(path: string[], value: unknown): Record<string, unknown> {
  return path.reduceRight<Record<string, unknown>>(
    (inner, segment) => ({ [segment]: inner }),
    value as never,
  );
}
