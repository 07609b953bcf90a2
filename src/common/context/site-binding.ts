import type { AuthUser } from './request-context';

/**
 * A user who belongs to a site works through that site's host only; admins and global users (no
 * site) anywhere. `hostSiteId` is the site the request's Host header chose (null: none).
 */
export function mayWorkThroughSite(user: AuthUser, hostSiteId: string | null): boolean {
  return user.role === 'admin' || user.siteId === null || user.siteId === hostSiteId;
}
