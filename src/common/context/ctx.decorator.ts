import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { RequestContext } from './request-context';

export function requestContextOf(request: FastifyRequest): RequestContext {
  return {
    requestId: String(request.id),
    user: request.user ?? null,
    siteId: request.siteId ?? null,
    locale: request.locale ?? 'en',
    formPermissions: request.formPermissions,
    formConfig: request.formConfig,
  };
}

/** Injects the RequestContext of the current request into a controller method. */
export const Ctx = createParamDecorator((_data: unknown, context: ExecutionContext): RequestContext => {
  return requestContextOf(context.switchToHttp().getRequest<FastifyRequest>());
});
