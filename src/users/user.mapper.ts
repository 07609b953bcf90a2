import type { UserResponseDto } from './dto/user.dto';
import type { UserRow } from './users.repository';

/** The only shape a user leaves the service in: never the password hash or token version. */
export function toUserResponse(row: UserRow): UserResponseDto {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    siteId: row.siteId ?? null,
    isActive: row.isActive,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
