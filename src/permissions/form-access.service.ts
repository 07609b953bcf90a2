import { Injectable } from '@nestjs/common';
import { AppCache, CACHE_TTL } from '../common/cache/app-cache.service';
import { requireUser, type AuthUser, type RequestContext } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import { FormConfigsService } from '../form-configs/form-configs.service';
import type { ConfigRow } from '../form-configs/form-configs.repository';
import { FORM_PERMISSIONS, type FormPermissionName } from './form-permission-names';
import { defaultFormPermissions } from './form-permission-defaults';
import { FormPermissionsRepository, type FormPermissionsRow } from './form-permissions.repository';

/** A configuration the caller may see, with what the caller may do on it. */
export interface FormAccess {
  config: ConfigRow;
  permissions: ReadonlySet<FormPermissionName>;
}

/**
 * The form-level access decision, callable from anywhere a RequestContext exists: the route guard,
 * the record, export and statistics services, a workflow run. Grants are cached 120 s.
 */
@Injectable()
export class FormAccessService {
  /**
   * Per context (a request or a run), the lookup of each configuration is done once: a guard and the
   * service behind it ask the same question, and the second ask costs nothing. Nothing is kept once
   * the context is gone.
   */
  private readonly lookups = new WeakMap<RequestContext, Map<string, Promise<FormAccess>>>();

  constructor(
    private readonly configs: FormConfigsService,
    private readonly repository: FormPermissionsRepository,
    private readonly cache: AppCache,
  ) {}

  /**
   * The active configuration visible to the caller and their effective permissions on it, when they
   * hold `permission`. A missing, inactive or other-site configuration is a 404 (CONFIG_NOT_FOUND),
   * checked before the permission (403 FORBIDDEN); no caller is a 401.
   */
  async require(ctx: RequestContext, configId: string, permission: FormPermissionName): Promise<FormAccess> {
    const access = await this.of(ctx, configId);
    if (!access.permissions.has(permission)) throw new AppError('FORBIDDEN');
    return access;
  }

  /** The same lookup without requiring a permission (what may the caller do here?). */
  of(ctx: RequestContext, configId: string): Promise<FormAccess> {
    const user = requireUser(ctx);
    let byConfig = this.lookups.get(ctx);
    if (!byConfig) this.lookups.set(ctx, (byConfig = new Map()));
    let lookup = byConfig.get(configId);
    if (!lookup) {
      lookup = this.load(ctx, user, configId);
      byConfig.set(configId, lookup);
    }
    return lookup;
  }

  grantsOf(configId: string): Promise<FormPermissionsRow | null> {
    return this.cache.getOrLoad(grantsKey(configId), CACHE_TTL.permission, () =>
      this.repository.findByConfig(configId),
    );
  }

  invalidate(configId: string): Promise<void> {
    return this.cache.delete(grantsKey(configId));
  }

  private async load(ctx: RequestContext, user: AuthUser, configId: string): Promise<FormAccess> {
    const config = await this.configs.requireVisible(ctx, configId);
    return { config, permissions: await this.permissionsOf(user, config.id) };
  }

  /** Admins hold everything; otherwise the configuration's grants for the role and the user, or the defaults. */
  private async permissionsOf(user: AuthUser, configId: string): Promise<Set<FormPermissionName>> {
    if (user.role === 'admin') return new Set(FORM_PERMISSIONS);
    const grants = await this.grantsOf(configId);
    if (!grants) return new Set(defaultFormPermissions(user.role));
    return new Set([...(grants.roles[user.role] ?? []), ...(grants.users[user.userId] ?? [])]);
  }
}

const grantsKey = (configId: string) => `form-permissions:${configId}`;
