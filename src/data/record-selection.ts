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
  parseStatusFilter,
  type EqualityFilter,
  type RecordStatus,
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
  /**
   * Submitted records (the default for active ones: all that lists, exports, statistics and the
   * save limit count), drafts, or either (a single record, the trash, a record's history).
   */
  status?: RecordStatus | 'any';
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
  return { ...everyoneIfAdminElseOwn(ctx, access), state: 'deleted' };
}

/**
 * The drafts of a configuration a caller may read (README "Drafts"): an admin's are everyone's,
 * anyone else's only their own (viewAllResults does not show other people's drafts).
 */
export function draftScope(ctx: RequestContext, access: FormAccess): RecordScope {
  return { ...everyoneIfAdminElseOwn(ctx, access), status: 'draft' };
}

/**
 * The records of a configuration in the caller's site scope: everyone's for an admin, else the
 * caller's own. The trash and the drafts share this rule (viewAllResults widens neither).
 */
function everyoneIfAdminElseOwn(ctx: RequestContext, access: FormAccess): RecordScope {
  const user = requireUser(ctx);
  return {
    configId: access.config.id,
    site: ownSiteScopeOf(ctx),
    ownerId: user.role === 'admin' ? null : user.userId,
  };
}

/** Reads of submitted records (recordScope's), or with `draft` the caller's drafts (draftScope). */
export function readScope(ctx: RequestContext, access: FormAccess, status: RecordStatus): RecordScope {
  return status === 'draft'
    ? draftScope(ctx, access)
    : recordScope(ctx, access, { owners: 'ownUnlessViewAll' });
}

/**
 * The scope of the list route: the trash with `deleted=true` (see trashScope; drafts in it too
 * unless `status` names one kind), else the submitted records or, with `status=draft`, the drafts.
 */
export function listScope(
  ctx: RequestContext,
  access: FormAccess,
  query: Record<string, unknown>,
): RecordScope {
  const status = parseStatusFilter(query);
  if (parseDeletedFlag(query)) {
    const explicit = query.status !== undefined && query.status !== '';
    return { ...trashScope(ctx, access), status: explicit ? status : 'any' };
  }
  return readScope(ctx, access, status);
}

/** The scope with drafts and submitted records alike (a single record's lookup). */
export const anyStatus = (scope: RecordScope): RecordScope => ({ ...scope, status: 'any' });

/** Whether a draft is hidden from the caller: only its owner and admins see one. */
export function hiddenDraft(ctx: RequestContext, record: { isDraft: boolean; userId: string | null }) {
  const user = requireUser(ctx);
  return record.isDraft && user.role !== 'admin' && record.userId !== user.userId;
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

/**
 * The records of the scope (active submitted ones unless it says otherwise) as a WHERE condition.
 * The trash and `any` state take drafts too unless the scope names a status.
 */
export function scopeCondition(scope: RecordScope): SQL {
  const state = scope.state ?? 'active';
  const status = scope.status ?? (state === 'active' ? 'submitted' : 'any');
  return and(
    eq(dataRecords.configId, scope.configId),
    state === 'any' ? undefined : eq(dataRecords.isActive, state === 'active'),
    draftCondition(status),
    siteCondition(dataRecords.siteId, scope.site),
    scope.ownerId ? eq(dataRecords.userId, scope.ownerId) : undefined,
  )!;
}

/**
 * Drafts or submitted records, written as the partial indexes' predicates are (`not is_draft`), so
 * the planner matches them whatever the driver binds.
 */
export function draftCondition(status: RecordStatus | 'any'): SQL | undefined {
  if (status === 'any') return undefined;
  return status === 'draft' ? sql`${dataRecords.isDraft}` : sql`not ${dataRecords.isDraft}`;
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
