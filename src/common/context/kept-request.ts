import type { Locale } from '../i18n/locale';
import {
  buildRequestContext,
  type AuthUser,
  type ChangeOrigin,
  type RequestContext,
} from './request-context';

/**
 * What background work keeps of the request that started it (stored with the work, an import or a
 * bulk operation): who asked, the site, the locale and the request id. Whichever instance goes on
 * with the work later does it in a context rebuilt from these, as that caller.
 */
export interface KeptRequest {
  actor: AuthUser;
  siteId: string | null;
  locale: Locale;
  requestId: string;
}

/** What to keep of `ctx`, whose caller is `actor`. */
export function keepRequest(ctx: RequestContext, actor: AuthUser): KeptRequest {
  return { actor, siteId: ctx.siteId, locale: ctx.locale, requestId: ctx.requestId };
}

/** The context work goes on in: the kept caller, site, locale and request id (and `origin`, if any). */
export function contextOfKept(request: KeptRequest, origin?: ChangeOrigin): RequestContext {
  return buildRequestContext({
    user: request.actor,
    siteId: request.siteId,
    locale: request.locale,
    requestId: request.requestId,
    origin,
  });
}
