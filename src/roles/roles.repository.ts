import { Inject, Injectable } from '@nestjs/common';
import { asc, eq } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { roles, users, type PermissionMap } from '../database/schema';

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

  async isInUse(name: string): Promise<boolean> {
    return (
      (await this.db.select({ id: users.id }).from(users).where(eq(users.role, name)).limit(1)).length > 0
    );
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

  async update(
    id: string,
    changes: Partial<Pick<RoleRow, 'name' | 'description' | 'permissions'>>,
  ): Promise<RoleRow | null> {
    const [row] = await this.db
      .update(roles)
      .set({ ...changes, updatedAt: new Date() })
      .where(eq(roles.id, id))
      .returning();
    return row ?? null;
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
