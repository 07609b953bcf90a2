import { ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { MemoizedReflector } from '../common/http/memoized-reflector';
import {
  AUTH_DECISION,
  REQUIRED_PERMISSION,
  REQUIRED_ROLES,
  type AuthDecision,
  type RequiredPermission,
} from '../common/auth/auth-decision.decorators';
import type { AuthUser } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import { isDatabaseUnavailable } from '../common/errors/database-unavailable';
import { mayWorkThroughSite } from '../common/context/site-binding';
import { RolePermissions } from '../roles/role-permissions.service';
import { SiteResolver } from '../sites/site-resolver.service';
import { bearerToken } from './bearer-token';

/**
 * Global guard: enforces each route's auth decision (public, authenticated, roles, role permission).
 * Authentication is passport's `jwt` strategy (JwtStrategy); a route without a decision is refused.
 */
@Injectable()
export class AccessGuard extends AuthGuard('jwt') {
  private readonly logger = new Logger(AccessGuard.name);
  /** Route metadata, read on every request: kept per handler and class (see MemoizedReflector). */
  private readonly reflector = new MemoizedReflector();

  constructor(
    private readonly rolePermissions: RolePermissions,
    private readonly sites: SiteResolver,
  ) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    const decision = this.reflector.getAllAndOverride<AuthDecision | undefined>(AUTH_DECISION, targets);
    if (decision === undefined) {
      // Fail closed: a route someone forgot to annotate is never open.
      this.logger.error(`Route ${context.getClass().name}.${context.getHandler().name} has no auth decision`);
      throw new AppError('FORBIDDEN');
    }
    if (decision === 'public') return true;

    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // No token at all is UNAUTHORIZED; a token that does not verify is TOKEN_INVALID (handleRequest).
    if (!bearerToken(request)) throw new AppError('UNAUTHORIZED');
    await super.canActivate(context);
    const user = request.user!;
    if (
      user.role !== 'admin' &&
      user.siteId !== null &&
      !mayWorkThroughSite(user, await this.sites.resolve(request))
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

  /**
   * Passport's outcome as our errors: the strategy's own AppError, or one 401 for any bad token. A
   * token that could not be checked because the database is away is not a bad token: the error goes
   * on as it is, and the exception filter answers 503 DATABASE_UNAVAILABLE (and tells the health).
   */
  override handleRequest<TUser = AuthUser>(error: unknown, user: TUser | false): TUser {
    if (error instanceof AppError || isDatabaseUnavailable(error)) throw error;
    if (error || !user) throw new AppError('TOKEN_INVALID');
    return user;
  }
}
