import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { from, switchMap, type Observable } from 'rxjs';
import { SiteResolver } from './site-resolver.service';

/** Puts the site chosen by the Host header on the request context before the handler runs. */
@Injectable()
export class TenantInterceptor implements NestInterceptor {
  constructor(private readonly resolver: SiteResolver) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    return from(this.resolver.resolve(request)).pipe(switchMap(() => next.handle()));
  }
}
