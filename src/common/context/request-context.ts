import { randomUUID } from 'node:crypto';
import { AppError } from '../errors/app-error';
import type { Locale } from '../i18n/locale';

/** Who is calling, as the access guard established it from the bearer token. */
export interface AuthUser {
  userId: string;
  role: string;
  email: string;
  /** The site the user belongs to; null for global users (admins, users registered without a site). */
  siteId: string | null;
}

/**
 * Through which route or workflow run a change is made, as a record's history states it: the HTTP
 * route (method and route pattern) or the run and step of a workflow.
 */
export type ChangeOrigin =
  | { kind: 'route'; route: string }
  | { kind: 'workflow'; runId: string; step: string }
  | { kind: 'import'; importId: string }
  /** The move of a draft untouched for DRAFT_RETENTION_DAYS to the trash (README "Drafts"). */
  | { kind: 'retention'; days: number };

/**
 * Passed first to every service call: who, for which tenant, in which language. It carries no
 * authorization decision: a service that needs one asks for it (`FormAccessService.require`).
 */
export interface RequestContext {
  readonly requestId: string;
  readonly user: AuthUser | null;
  /** The site chosen by the Host header; null when the host matches no site. */
  readonly siteId: string | null;
  readonly locale: Locale;
  /** Where the work comes from (for records' history); absent for work of unknown origin. */
  readonly origin?: ChangeOrigin;
}

/**
 * The context of work done outside an HTTP request (a workflow run, a job), of the same type a
 * request gets, so services cannot tell the two apart.
 */
export function buildRequestContext(input: {
  user: AuthUser | null;
  siteId: string | null;
  locale?: Locale;
  requestId?: string;
  origin?: ChangeOrigin;
}): RequestContext {
  return {
    requestId: input.requestId ?? randomUUID(),
    user: input.user,
    siteId: input.siteId,
    locale: input.locale ?? 'en',
    ...(input.origin ? { origin: input.origin } : {}),
  };
}

/** The caller, or a 401 when the context has none. */
export function requireUser(ctx: RequestContext): AuthUser {
  if (!ctx.user) throw new AppError('UNAUTHORIZED');
  return ctx.user;
}

/**
 * The caller when an admin: a 401 without one, a 403 for anyone else. For services that are the
 * admins' alone, which check it themselves whatever route or job calls them (their routes' guard,
 * `@Roles('admin')`, holds it too).
 */
export function requireAdmin(ctx: RequestContext): AuthUser {
  const user = requireUser(ctx);
  if (user.role !== 'admin') throw new AppError('FORBIDDEN');
  return user;
}

declare module 'fastify' {
  interface FastifyRequest {
    user?: AuthUser;
    siteId?: string | null;
    locale?: Locale;
    requestContext?: RequestContext;
  }
}
