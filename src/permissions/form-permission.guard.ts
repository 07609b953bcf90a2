import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { REQUIRED_FORM_PERMISSION } from '../common/auth/auth-decision.decorators';
import { requestContextOf } from '../common/context/ctx.decorator';
import { AppError } from '../common/errors/app-error';
import type { FormPermissionName } from '../database/schema';
import { SiteResolver } from '../sites/site-resolver.service';
import { FormAccessService } from './form-access.service';
import { FormConfigsService } from '../form-configs/form-configs.service';

/**
 * Enforces @FormPermission(name) on routes with `:configId`: the configuration must be active and
 * visible on the request's site (else 404), and the caller must hold the permission (else 403).
 */
@Injectable()
export class FormPermissionGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: FormAccessService,
    private readonly configs: FormConfigsService,
    private readonly sites: SiteResolver,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const permission = this.reflector.getAllAndOverride<FormPermissionName | undefined>(
      REQUIRED_FORM_PERMISSION,
      [context.getHandler(), context.getClass()],
    );
    if (!permission) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (!request.user) throw new AppError('UNAUTHORIZED');
    await this.sites.resolve(request);
    const configId = (request.params as Record<string, string> | undefined)?.configId ?? '';
    const ctx = requestContextOf(request);
    // Throws CONFIG_NOT_FOUND for a missing, inactive or other-site configuration; services reuse it.
    request.formConfig = await this.configs.requireVisible(ctx, configId);
    const granted = await this.access.effectivePermissions(request.user, configId);
    request.formPermissions = granted;
    if (!granted.has(permission)) throw new AppError('FORBIDDEN');
    return true;
  }
}
