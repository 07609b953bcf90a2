import { isNull, or, eq, type SQL, type Column } from 'drizzle-orm';
import type { RequestContext } from './request-context';

/**
 * Which tenant data a request may see. Admins are global and see every site. Everyone else sees
 * the data of the site chosen by the Host header plus data without a site; a host that matches no
 * site sees only data without a site. Another site's configuration or record is a 404, never a leak.
 */
export type SiteScope = { kind: 'all' } | { kind: 'site'; siteId: string | null };

export function siteScopeOf(ctx: RequestContext): SiteScope {
  if (ctx.user?.role === 'admin') return { kind: 'all' };
  return { kind: 'site', siteId: ctx.siteId };
}

/** The WHERE condition of a scope on a `site_id` column; undefined means no restriction. */
export function siteCondition(column: Column, scope: SiteScope): SQL | undefined {
  if (scope.kind === 'all') return undefined;
  return scope.siteId ? or(isNull(column), eq(column, scope.siteId)) : isNull(column);
}

/** The same rule for a row already loaded. */
export function isVisibleInScope(rowSiteId: string | null, scope: SiteScope): boolean {
  if (scope.kind === 'all') return true;
  return rowSiteId === null || rowSiteId === scope.siteId;
}
