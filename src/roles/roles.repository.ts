import { Inject, Injectable } from '@nestjs/common';
import { eq } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { roles, type PermissionMap } from '../database/schema';

export type RoleRow = typeof roles.$inferSelect;

@Injectable()
export class RolesRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async findPermissionsByName(name: string): Promise<PermissionMap | null> {
    const [row] = await this.db
      .select({ permissions: roles.permissions })
      .from(roles)
      .where(eq(roles.name, name))
      .limit(1);
    return row?.permissions ?? null;
  }
}
