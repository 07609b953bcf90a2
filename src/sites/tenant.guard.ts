import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { MemoizedReflector } from '../common/http/memoized-reflector';
import { SKIP_SITE_RESOLUTION } from '../common/context/skip-site.decorator';
import { SiteResolver } from './site-resolver.service';

/**
 * Puts the site chosen by the Host header on the request before the handler runs. It never refuses
 * (an unknown host is the global scope); it is a guard rather than an interceptor because an
 * interceptor wraps every request in observables and async-context bindings, a measurable share of
 * a create's CPU, for a lookup that only needs to happen first.
 */
@Injectable()
export class TenantGuard implements CanActivate {
  /** Route metadata, read on every request: kept per handler and class (see MemoizedReflector). */
  private readonly reflector = new MemoizedReflector();

  constructor(private readonly resolver: SiteResolver) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const skip = this.reflector.getAllAndOverride<boolean | undefined>(SKIP_SITE_RESOLUTION, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!skip) await this.resolver.resolve(context.switchToHttp().getRequest<FastifyRequest>());
    return true;
  }
}
