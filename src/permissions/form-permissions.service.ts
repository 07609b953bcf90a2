import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../common/context/request-context';
import { AppError, type FieldError } from '../common/errors/app-error';
import { isUuid } from '../common/validation/is-uuid';
import { FormConfigsService } from '../form-configs/form-configs.service';
import { FORM_PERMISSIONS, type FormPermissionName } from './form-permission-names';
import { RolesService } from '../roles/roles.service';
import { SYSTEM_ROLES } from '../roles/system-roles';
import { defaultFormPermissions } from './form-permission-defaults';
import { FormAccessService } from './form-access.service';
import { FormPermissionsRepository, type Grants } from './form-permissions.repository';
import type {
  FormPermissionsDto,
  MyFormPermissionsDto,
  ReplaceFormPermissionsDto,
} from './dto/permissions.dto';

@Injectable()
export class FormPermissionsService {
  constructor(
    private readonly configs: FormConfigsService,
    private readonly repository: FormPermissionsRepository,
    private readonly access: FormAccessService,
    private readonly roles: RolesService,
  ) {}

  /** The stored grants, or the defaults of the system roles when none are stored. */
  async get(ctx: RequestContext, configId: string): Promise<FormPermissionsDto> {
    const config = await this.configs.requireVisible(ctx, configId);
    const grants = await this.access.grantsOf(config.id);
    if (grants) return { configId: config.id, roles: grants.roles, users: grants.users, isDefault: false };
    const roles = Object.fromEntries(
      SYSTEM_ROLES.map((role) => [role.name, defaultFormPermissions(role.name)]),
    );
    return { configId: config.id, roles, users: {}, isDefault: true };
  }

  async replace(
    ctx: RequestContext,
    configId: string,
    body: ReplaceFormPermissionsDto,
  ): Promise<FormPermissionsDto> {
    const config = await this.configs.requireVisible(ctx, configId);
    const problems: FieldError[] = [];
    const roles = this.checkGrants(body.roles ?? {}, 'roles', problems);
    const users = this.checkGrants(body.users ?? {}, 'users', problems);
    const knownRoles = new Set(await this.roles.names());
    for (const name of Object.keys(roles)) {
      if (!knownRoles.has(name))
        problems.push({ field: `roles.${name}`, rule: 'exists', message: `unknown role "${name}"` });
    }
    for (const id of Object.keys(users)) {
      if (!isUuid(id))
        problems.push({
          field: `users.${id.slice(0, 40)}`,
          rule: 'isUuid',
          message: 'user keys must be user ids',
        });
    }
    if (problems.length > 0) throw new AppError('VALIDATION_FAILED', { validationErrors: problems });
    const row = await this.repository.replace(config.id, { roles, users });
    await this.access.invalidate(config.id);
    return { configId: config.id, roles: row.roles, users: row.users, isDefault: false };
  }

  /** What the caller may do on this configuration, so a client can show the right buttons. */
  async mine(ctx: RequestContext, configId: string): Promise<MyFormPermissionsDto> {
    const { config, permissions } = await this.access.of(ctx, configId);
    return {
      configId: config.id,
      permissions: FORM_PERMISSIONS.filter((permission) => permissions.has(permission)),
    };
  }

  private checkGrants(grants: Record<string, unknown>, field: string, problems: FieldError[]): Grants {
    const result: Grants = {};
    for (const [key, value] of Object.entries(grants)) {
      if (
        !Array.isArray(value) ||
        !value.every((p) => (FORM_PERMISSIONS as readonly unknown[]).includes(p))
      ) {
        problems.push({
          field: `${field}.${key.slice(0, 40)}`,
          rule: 'isIn',
          message: `permissions must be among ${FORM_PERMISSIONS.join(', ')}`,
        });
        continue;
      }
      result[key] = [...new Set(value as FormPermissionName[])];
    }
    return result;
  }
}
