import { ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { I18nResolver } from 'nestjs-i18n';

/**
 * Hands nestjs-i18n the locale the request already has: it is resolved once, in the `onRequest`
 * hook (`resolveLocale`), and everything (services, the error filter) passes that answer to each
 * translation. nestjs-i18n requires a resolver (it logs an error at boot without one); with its
 * language interceptor left out (i18nCoreModule) nothing per request calls it.
 */
@Injectable()
export class RequestLocaleResolver implements I18nResolver {
  resolve(context: ExecutionContext): string | undefined {
    return context.switchToHttp().getRequest<FastifyRequest | undefined>()?.locale;
  }
}
