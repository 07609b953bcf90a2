import { Injectable } from '@nestjs/common';
import { AppCache, CACHE_TTL } from '../common/cache/app-cache.service';
import { RolesRepository } from './roles.repository';

/** Answers "may this role do that", reading the role's permission map (cached 120 s). */
@Injectable()
export class RolePermissions {
  constructor(
    private readonly roles: RolesRepository,
    private readonly cache: AppCache,
  ) {}

  static key(roleName: string): string {
    return `role-permissions:${roleName}`;
  }

  async allows(roleName: string, resource: string, action: string): Promise<boolean> {
    const permissions = await this.cache.getOrLoad(RolePermissions.key(roleName), CACHE_TTL.permission, () =>
      this.roles.findPermissionsByName(roleName),
    );
    if (!permissions) return false;
    const actions = [...(permissions[resource] ?? []), ...(permissions['*'] ?? [])];
    return actions.includes(action) || actions.includes('*');
  }

  invalidate(roleName: string): Promise<void> {
    return this.cache.delete(RolePermissions.key(roleName));
  }
}
