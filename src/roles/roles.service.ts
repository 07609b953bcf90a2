import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/validation/is-uuid';
import type { PermissionMap } from '../database/schema';
import type { CreateRoleDto, RoleListDto, RoleResponseDto, UpdateRoleDto } from './dto/role.dto';
import { toRoleResponse } from './role.mapper';
import { RoleHolders } from './role-holders';
import { RolePermissions } from './role-permissions.service';
import { RolesRepository, type RoleRow } from './roles.repository';
import { ADMIN_ROLE } from './system-roles';

const NAME = /^[A-Za-z0-9_*-]{1,50}$/;

/** A permission map must be `{resource: [action, ...]}` with short word-like names. */
function assertPermissionMap(map: unknown): PermissionMap {
  const valid =
    map !== null &&
    typeof map === 'object' &&
    !Array.isArray(map) &&
    Object.keys(map).length <= 100 &&
    Object.entries(map).every(
      ([resource, actions]) =>
        NAME.test(resource) &&
        Array.isArray(actions) &&
        actions.length <= 50 &&
        actions.every((a) => typeof a === 'string' && NAME.test(a)),
    );
  if (!valid) {
    throw new AppError('VALIDATION_FAILED', {
      validationErrors: [
        {
          field: 'permissions',
          rule: 'permissionMap',
          message: 'permissions must map resource names to arrays of action names',
        },
      ],
    });
  }
  return map as PermissionMap;
}

@Injectable()
export class RolesService {
  constructor(
    private readonly roles: RolesRepository,
    private readonly permissions: RolePermissions,
    private readonly holders: RoleHolders,
  ) {}

  /** True when a role of this name exists (users may be given only existing roles). */
  exists(name: string): Promise<boolean> {
    return this.roles.existsByName(name);
  }

  async names(): Promise<string[]> {
    return (await this.roles.list()).map((role) => role.name);
  }

  async list(_ctx: RequestContext): Promise<RoleListDto> {
    const rows = await this.roles.list();
    return { data: rows.map(toRoleResponse), totalCount: rows.length };
  }

  async create(_ctx: RequestContext, body: CreateRoleDto): Promise<RoleResponseDto> {
    const row = await this.roles.insertUnlessNameTaken({
      name: body.name,
      description: body.description ?? '',
      permissions: assertPermissionMap(body.permissions),
    });
    if (!row) throw new AppError('ROLE_NAME_TAKEN');
    // A lookup of this name before it existed ("no permissions") may be kept; it is wrong now.
    await this.permissions.invalidate(row.name);
    return toRoleResponse(row);
  }

  async update(_ctx: RequestContext, roleId: string, body: UpdateRoleDto): Promise<RoleResponseDto> {
    const role = await this.require(roleId);
    const renaming = body.name !== undefined && body.name !== role.name;
    if (renaming && role.isSystem) throw new AppError('ROLE_PROTECTED');
    const permissions = body.permissions === undefined ? undefined : assertPermissionMap(body.permissions);
    // Admins hold `*` on everything: narrower admin permissions would lock every admin out.
    if (role.name === ADMIN_ROLE && permissions && !permissions['*']?.includes('*'))
      throw new AppError('ROLE_PROTECTED');
    // Users refer to their role by name; renaming a role someone holds would orphan them.
    if (renaming && (await this.holders.anyHolds(role.name))) throw new AppError('ROLE_IN_USE');
    const updated = await this.roles.update(role.id, {
      ...(body.name !== undefined && { name: body.name }),
      ...(body.description !== undefined && { description: body.description }),
      ...(permissions !== undefined && { permissions }),
    });
    if (updated === 'nameTaken') throw new AppError('ROLE_NAME_TAKEN');
    if (!updated) throw new AppError('ROLE_NOT_FOUND');
    await this.permissions.invalidate(role.name);
    if (renaming) await this.permissions.invalidate(updated.name);
    return toRoleResponse(updated);
  }

  async remove(_ctx: RequestContext, roleId: string): Promise<RoleResponseDto> {
    const role = await this.require(roleId);
    if (role.isSystem) throw new AppError('ROLE_PROTECTED');
    if (await this.holders.anyHolds(role.name)) throw new AppError('ROLE_IN_USE');
    const deleted = await this.roles.delete(role.id);
    if (!deleted) throw new AppError('ROLE_NOT_FOUND');
    await this.permissions.invalidate(role.name);
    return toRoleResponse(deleted);
  }

  private async require(roleId: string): Promise<RoleRow> {
    const role = isUuid(roleId) ? await this.roles.findById(roleId) : null;
    if (!role) throw new AppError('ROLE_NOT_FOUND');
    return role;
  }
}
