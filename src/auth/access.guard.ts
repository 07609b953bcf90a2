import { CanActivate, ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../common/errors/app-error';
import {
  AUTH_DECISION,
  REQUIRED_PERMISSION,
  REQUIRED_ROLES,
  type AuthDecision,
  type RequiredPermission,
} from '../common/auth/auth-decision.decorators';
import { RolePermissions } from '../roles/role-permissions.service';
import { SiteResolver } from '../sites/site-resolver.service';
import { TokenService, type TokenClaims } from './token.service';

declare module 'fastify' {
  interface FastifyRequest {
    tokenClaims?: TokenClaims;
  }
}

/** Global guard: enforces each route's auth decision (public, authenticated, roles, role permission). */
@Injectable()
export class AccessGuard implements CanActivate {
  private readonly logger = new Logger(AccessGuard.name);

  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: TokenService,
    private readonly rolePermissions: RolePermissions,
    private readonly sites: SiteResolver,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    const decision = this.reflector.getAllAndOverride<AuthDecision | undefined>(AUTH_DECISION, targets);
    if (decision === undefined) {
      // Fail closed: a route someone forgot to annotate is never open.
      this.logger.error(`Route ${context.getClass().name}.${context.getHandler().name} has no auth decision`);
      throw new AppError('FORBIDDEN');
    }
    if (decision === 'public') return true;

    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const token = bearerToken(request);
    if (!token) throw new AppError('UNAUTHORIZED');
    const { user, claims } = await this.tokens.authenticate(token);
    request.user = user;
    request.tokenClaims = claims;
    // A user who belongs to a site works through that site's host only; admins and global users anywhere.
    if (
      user.role !== 'admin' &&
      user.siteId !== null &&
      (await this.sites.resolve(request)) !== user.siteId
    ) {
      throw new AppError('FORBIDDEN');
    }

    const roles = this.reflector.getAllAndOverride<string[] | undefined>(REQUIRED_ROLES, targets);
    if (roles && !roles.includes(user.role)) throw new AppError('FORBIDDEN');
    const permission = this.reflector.getAllAndOverride<RequiredPermission | undefined>(
      REQUIRED_PERMISSION,
      targets,
    );
    if (
      permission &&
      !(await this.rolePermissions.allows(user.role, permission.resource, permission.action))
    ) {
      throw new AppError('FORBIDDEN');
    }
    return true;
  }
}

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return match ? match[1] : null;
}
