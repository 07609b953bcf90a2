import type { UserRow } from './users.repository';

export interface UserResponse {
  id: string;
  email: string;
  name: string;
  role: string;
  siteId: string | null;
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
}

/** The only shape a user leaves the service in: never the password hash or token version. */
export function toUserResponse(row: UserRow): UserResponse {
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
