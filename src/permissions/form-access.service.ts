import { Injectable } from '@nestjs/common';
import { AppCache, CACHE_TTL } from '../common/cache/app-cache.service';
import type { AuthUser } from '../common/context/request-context';
import { FORM_PERMISSIONS, type FormPermissionName } from '../database/schema';
import { defaultFormPermissions } from './form-permission-defaults';
import { FormPermissionsRepository, type FormPermissionsRow } from './form-permissions.repository';

/** The effective form-level permissions of a user on a configuration (grants cached 120 s). */
@Injectable()
export class FormAccessService {
  constructor(
    private readonly repository: FormPermissionsRepository,
    private readonly cache: AppCache,
  ) {}

  static key(configId: string): string {
    return `form-permissions:${configId}`;
  }

  grantsOf(configId: string): Promise<FormPermissionsRow | null> {
    return this.cache.getOrLoad(FormAccessService.key(configId), CACHE_TTL.permission, () =>
      this.repository.findByConfig(configId),
    );
  }

  /** Admins hold everything; otherwise the configuration's grants for the role and the user, or the defaults. */
  async effectivePermissions(user: AuthUser, configId: string): Promise<Set<FormPermissionName>> {
    if (user.role === 'admin') return new Set(FORM_PERMISSIONS);
    const grants = await this.grantsOf(configId);
    if (!grants) return new Set(defaultFormPermissions(user.role));
    return new Set([...(grants.roles[user.role] ?? []), ...(grants.users[user.userId] ?? [])]);
  }

  invalidate(configId: string): Promise<void> {
    return this.cache.delete(FormAccessService.key(configId));
  }
}
