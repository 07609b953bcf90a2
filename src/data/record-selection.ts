import { and, eq, or, sql, type SQL } from 'drizzle-orm';
import { requireUser, type RequestContext } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import { ownSiteScopeOf, siteCondition, type SiteScope } from '../common/context/site-scope';
import { dataRecords } from '../database/schema';
import type { ConfigRow } from '../form-configs/form-configs.repository';
import type { FormAccess } from '../permissions/form-access.service';
import { compileGridFilter } from './grid/grid-filter.compiler';
import { parseGridLoadOptions, type GridFilter } from './grid/grid-load-options';
import {
  containmentOf,
  parseConfigVersionFilter,
  parseDeletedFlag,
  parsePagingQuery,
  type EqualityFilter,
} from './list-query.parser';

/**
 * Who may see which records of a configuration: the records' site scope (exactly the caller's site,
 * also on a shared form), and only one owner's when set.
 */
export interface RecordScope {
  configId: string;
  site: SiteScope;
  ownerId: string | null;
  /**
   * Active records (the default, and all that lists, exports and statistics ever ask for), the
   * trash (`deleted`), or either (`any`, a record's history).
   */
  state?: 'active' | 'deleted' | 'any';
}

/**
 * Whose records a lookup covers. Reads see everyone's with viewAllResults (or as admin), otherwise
 * only the caller's own (`ownUnlessViewAll`). A change or delete finds the record among everyone's
 * (`any`) and then refuses someone else's with a 403, as the spec's delete rule says.
 */
export type OwnerFilter = 'ownUnlessViewAll' | 'any';

export function recordScope(
  ctx: RequestContext,
  access: FormAccess,
  options: { owners: OwnerFilter },
): RecordScope {
  const user = requireUser(ctx);
  const seesAll = user.role === 'admin' || access.permissions.has('viewAllResults');
  return {
    configId: access.config.id,
    site: ownSiteScopeOf(ctx),
    ownerId: options.owners === 'ownUnlessViewAll' && !seesAll ? user.userId : null,
  };
}

/**
 * Whether the caller may open the trash of a configuration: admins, and owners holding
 * deleteOwnResults on a form that allows deletion (they see their own deleted records only).
 */
export function mayOpenTrash(ctx: RequestContext, access: FormAccess): boolean {
  if (requireUser(ctx).role === 'admin') return true;
  return access.permissions.has('deleteOwnResults') && access.config.preferences.allowDelete;
}

/**
 * The trash of a configuration, to whoever may delete there: an admin sees every deleted record of
 * the scope, an owner only their own; anyone else is a 403. The site scope is the active records'.
 */
export function trashScope(ctx: RequestContext, access: FormAccess): RecordScope {
  if (!mayOpenTrash(ctx, access)) {
    throw access.permissions.has('deleteOwnResults')
      ? new AppError('FORBIDDEN', { messageKey: 'data.deleteNotAllowed' })
      : new AppError('FORBIDDEN');
  }
  const user = requireUser(ctx);
  return {
    configId: access.config.id,
    site: ownSiteScopeOf(ctx),
    ownerId: user.role === 'admin' ? null : user.userId,
    state: 'deleted',
  };
}

/** The scope of the list route: the trash with `deleted=true` (see trashScope), else recordScope's reads. */
export function listScope(
  ctx: RequestContext,
  access: FormAccess,
  query: Record<string, unknown>,
): RecordScope {
  return parseDeletedFlag(query)
    ? trashScope(ctx, access)
    : recordScope(ctx, access, { owners: 'ownUnlessViewAll' });
}

/**
 * Filters of a query: the paging form's equality filters, the grid form's `filter` and the
 * configuration version the records were last validated against.
 */
export interface RecordFilters {
  equality: EqualityFilter[];
  grid: GridFilter | null;
  configVersion: number | null;
}

export const NO_FILTERS: RecordFilters = { equality: [], grid: null, configVersion: null };

/**
 * `filters` (JSON or `filters[x]=v`), `filter` (grid grammar) and `configVersion` of a query; bad
 * ones are a 422/400.
 */
export function parseRecordFilters(query: Record<string, unknown>): RecordFilters {
  const bracketFilters = Object.entries(query).filter(([key]) => key.startsWith('filters['));
  const paging = parsePagingQuery({ filters: query.filters, ...Object.fromEntries(bracketFilters) });
  return {
    equality: paging.filters,
    grid: parseGridLoadOptions({ filter: query.filter }).filter,
    configVersion: parseConfigVersionFilter(query),
  };
}

/** The records a caller may see on one configuration, narrowed by filters. */
export interface RecordSelection {
  readonly config: ConfigRow;
  readonly scope: RecordScope;
  readonly filters: RecordFilters;
}

/** The records of the scope (active ones unless it says otherwise) as a WHERE condition. */
export function scopeCondition(scope: RecordScope): SQL {
  const state = scope.state ?? 'active';
  return and(
    eq(dataRecords.configId, scope.configId),
    state === 'any' ? undefined : eq(dataRecords.isActive, state === 'active'),
    siteCondition(dataRecords.siteId, scope.site),
    scope.ownerId ? eq(dataRecords.userId, scope.ownerId) : undefined,
  )!;
}

/** The paging form's equality filters as WHERE conditions. */
export function equalityConditions(filters: EqualityFilter[]): SQL[] {
  return filters.map((filter) => {
    const alternatives = filter.candidates.map(
      (candidate) =>
        sql`${dataRecords.data} @> ${JSON.stringify(containmentOf(filter.path, candidate))}::jsonb`,
    );
    return alternatives.length === 1 ? alternatives[0] : or(...alternatives)!;
  });
}

/**
 * Records last validated against `version` of their configuration (none: every version). No index
 * has the column: it narrows the configuration's records, and an index would cost every create.
 */
export function configVersionCondition(version: number | null): SQL | undefined {
  return version === null ? undefined : eq(dataRecords.configVersion, version);
}

/** Scope and filters of a selection as one WHERE condition. */
export function selectionCondition(selection: Pick<RecordSelection, 'scope' | 'filters'>): SQL {
  return and(
    scopeCondition(selection.scope),
    configVersionCondition(selection.filters.configVersion),
    ...equalityConditions(selection.filters.equality),
    selection.filters.grid ? compileGridFilter(selection.filters.grid) : undefined,
  )!;
}
