import type { RoleResponseDto } from './dto/role.dto';
import type { RoleRow } from './roles.repository';

export function toRoleResponse(row: RoleRow): RoleResponseDto {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    permissions: row.permissions,
    isSystem: row.isSystem,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
