import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { MemoizedReflector } from '../common/http/memoized-reflector';
import { REQUIRED_FORM_PERMISSION } from './form-permission.decorator';
import { requestContextOf } from '../common/context/ctx.decorator';
import type { FormPermissionName } from './form-permission-names';
import { SiteResolver } from '../sites/site-resolver.service';
import { FormAccessService } from './form-access.service';

/**
 * Enforces @FormPermission(name) on routes with `:configId` before the body is read: the same
 * `FormAccessService.require` the services call (404 before 403). It leaves nothing on the request.
 */
@Injectable()
export class FormPermissionGuard implements CanActivate {
  /** Route metadata, read on every request: kept per handler and class (see MemoizedReflector). */
  private readonly reflector = new MemoizedReflector();

  constructor(
    private readonly access: FormAccessService,
    private readonly sites: SiteResolver,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const permission = this.reflector.getAllAndOverride<FormPermissionName | undefined>(
      REQUIRED_FORM_PERMISSION,
      [context.getHandler(), context.getClass()],
    );
    if (!permission) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // Resolved once per request (the TenantGuard may have done it already): the order of global
    // guards from different modules is not something to rely on.
    await this.sites.resolve(request);
    const configId = (request.params as Record<string, string> | undefined)?.configId ?? '';
    await this.access.require(requestContextOf(request), configId, permission);
    return true;
  }
}
