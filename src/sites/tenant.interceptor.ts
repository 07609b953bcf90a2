import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { from, switchMap, type Observable } from 'rxjs';
import { SKIP_SITE_RESOLUTION } from '../common/context/skip-site.decorator';
import { SiteResolver } from './site-resolver.service';

/** Puts the site chosen by the Host header on the request context before the handler runs. */
@Injectable()
export class TenantInterceptor implements NestInterceptor {
  constructor(
    private readonly resolver: SiteResolver,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const skip = this.reflector.getAllAndOverride<boolean | undefined>(SKIP_SITE_RESOLUTION, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (skip) return next.handle();
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    return from(this.resolver.resolve(request)).pipe(switchMap(() => next.handle()));
  }
}
