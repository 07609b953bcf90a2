import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { buildRequestContext, type RequestContext } from './request-context';

/**
 * The context of a request, built once the caller and the site are known and then kept on the
 * request, so a guard and the handler hand the same object to services (whose per-context memos,
 * such as the form-access lookup, then serve both). Rebuilt if the caller or site changed since.
 */
export function requestContextOf(request: FastifyRequest): RequestContext {
  const user = request.user ?? null;
  const siteId = request.siteId ?? null;
  const kept = request.requestContext;
  if (kept && kept.user === user && kept.siteId === siteId) return kept;
  request.requestContext = buildRequestContext({
    user,
    siteId,
    locale: request.locale,
    requestId: String(request.id),
    // The route pattern, not the URL: ids and query strings stay out of a record's history.
    ...(request.routeOptions.url
      ? { origin: { kind: 'route', route: `${request.method} ${request.routeOptions.url}` } as const }
      : {}),
  });
  return request.requestContext;
}

/** Injects the RequestContext of the current request into a controller method. */
export const Ctx = createParamDecorator((_data: unknown, context: ExecutionContext): RequestContext => {
  return requestContextOf(context.switchToHttp().getRequest<FastifyRequest>());
});
