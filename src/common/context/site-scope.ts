import { isNull, or, eq, type SQL, type Column } from 'drizzle-orm';
import type { RequestContext } from './request-context';

/**
 * Which tenant data a request may see. Admins are global and see every site (`all`).
 * Configurations and workflow definitions (`withShared`): the site chosen by the Host header plus
 * those without a site, which are shared by every site; a host that matches no site sees only the
 * shared ones. Records and workflow runs (`only`): exactly the caller's site (`callerSiteOf`), so a
 * shared form's submissions stay with the site they came through; a caller without any site sees
 * only rows without a site. Another site's row is a 404, never a leak.
 */
export type SiteScope =
  { kind: 'all' } | { kind: 'withShared'; siteId: string | null } | { kind: 'only'; siteId: string | null };

/** The scope of configurations and workflow definitions. */
export function siteScopeOf(ctx: RequestContext): SiteScope {
  if (ctx.user?.role === 'admin') return { kind: 'all' };
  return { kind: 'withShared', siteId: ctx.siteId };
}

/**
 * The scope of records, workflow runs and sites themselves: tenant data, which is never shared
 * between sites. A caller without a site sees only rows without one (and no site).
 */
export function ownSiteScopeOf(ctx: RequestContext): SiteScope {
  if (ctx.user?.role === 'admin') return { kind: 'all' };
  return { kind: 'only', siteId: callerSiteOf(ctx) };
}

/**
 * The site a caller works in: the Host's site, else the user's own (a global user on a host
 * without a site has none). The access guard lets a site's user in through that site's host only,
 * so for them both are the same.
 */
export function callerSiteOf(ctx: RequestContext): string | null {
  return ctx.siteId ?? ctx.user?.siteId ?? null;
}

/**
 * The site a new record (or workflow run) belongs to: its form's, and for a form without a site
 * (shared by every site) the site of the request it came through.
 */
export function siteOfNewRecord(ctx: RequestContext, formSiteId: string | null): string | null {
  return formSiteId ?? callerSiteOf(ctx);
}

/** The WHERE condition of a scope on a `site_id` column; undefined means no restriction. */
export function siteCondition(column: Column, scope: SiteScope): SQL | undefined {
  if (scope.kind === 'all') return undefined;
  if (scope.kind === 'only') return sameSite(column, scope.siteId);
  return scope.siteId ? or(isNull(column), eq(column, scope.siteId)) : isNull(column);
}

/** Rows of exactly this site (`null`: rows without a site). */
export function sameSite(column: Column, siteId: string | null): SQL {
  return siteId ? eq(column, siteId) : isNull(column);
}

/** The same rule for a row already loaded. */
export function isVisibleInScope(rowSiteId: string | null, scope: SiteScope): boolean {
  if (scope.kind === 'all') return true;
  if (scope.kind === 'only') return rowSiteId === scope.siteId;
  return rowSiteId === null || rowSiteId === scope.siteId;
}
