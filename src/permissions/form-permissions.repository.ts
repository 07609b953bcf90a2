import { Inject, Injectable } from '@nestjs/common';
import { eq } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { formPermissions, type FormPermissionName } from '../database/schema';

export type FormPermissionsRow = typeof formPermissions.$inferSelect;

@Injectable()
export class FormPermissionsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async findByConfig(configId: string): Promise<FormPermissionsRow | null> {
    const [row] = await this.db
      .select()
      .from(formPermissions)
      .where(eq(formPermissions.configId, configId))
      .limit(1);
    return row ?? null;
  }

  /** Replaces the grants of a configuration (insert or update in one statement). */
  async replace(
    configId: string,
    grants: { roles: Record<string, FormPermissionName[]>; users: Record<string, FormPermissionName[]> },
  ): Promise<FormPermissionsRow> {
    const [row] = await this.db
      .insert(formPermissions)
      .values({ configId, ...grants })
      .onConflictDoUpdate({ target: formPermissions.configId, set: { ...grants, updatedAt: new Date() } })
      .returning();
    return row;
  }
}
