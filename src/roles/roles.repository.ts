import { Inject, Injectable } from '@nestjs/common';
import { asc, eq } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { isUniqueViolation } from '../database/unique-violation';
import { roles, type PermissionMap } from '../database/schema';

export type RoleRow = typeof roles.$inferSelect;

@Injectable()
export class RolesRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async list(): Promise<RoleRow[]> {
    return this.db.select().from(roles).orderBy(asc(roles.name));
  }

  async findById(id: string): Promise<RoleRow | null> {
    const [row] = await this.db.select().from(roles).where(eq(roles.id, id)).limit(1);
    return row ?? null;
  }

  async existsByName(name: string): Promise<boolean> {
    return (
      (await this.db.select({ id: roles.id }).from(roles).where(eq(roles.name, name)).limit(1)).length > 0
    );
  }

  /** Inserts the system roles that do not exist yet; existing ones are left as they are. */
  async insertSystemRolesIfMissing(
    systemRoles: { name: string; description: string; permissions: PermissionMap }[],
  ): Promise<void> {
    await this.db
      .insert(roles)
      .values(systemRoles.map((role) => ({ ...role, isSystem: true })))
      .onConflictDoNothing({ target: roles.name });
  }

  /** Null when the name is taken (the unique index decides). */
  async insertUnlessNameTaken(role: {
    name: string;
    description: string;
    permissions: PermissionMap;
  }): Promise<RoleRow | null> {
    const [row] = await this.db
      .insert(roles)
      .values(role)
      .onConflictDoNothing({ target: roles.name })
      .returning();
    return row ?? null;
  }

  /** The updated role, null when it is gone, or 'nameTaken' when another role has the new name. */
  async update(
    id: string,
    changes: Partial<Pick<RoleRow, 'name' | 'description' | 'permissions'>>,
  ): Promise<RoleRow | null | 'nameTaken'> {
    try {
      const [row] = await this.db
        .update(roles)
        .set({ ...changes, updatedAt: new Date() })
        .where(eq(roles.id, id))
        .returning();
      return row ?? null;
    } catch (error) {
      if (isUniqueViolation(error, 'roles_name_unique')) return 'nameTaken';
      throw error;
    }
  }

  async delete(id: string): Promise<RoleRow | null> {
    const [row] = await this.db.delete(roles).where(eq(roles.id, id)).returning();
    return row ?? null;
  }

  async findPermissionsByName(name: string): Promise<PermissionMap | null> {
    const [row] = await this.db
      .select({ permissions: roles.permissions })
      .from(roles)
      .where(eq(roles.name, name))
      .limit(1);
    return row?.permissions ?? null;
  }
}
