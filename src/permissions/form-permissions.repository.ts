import { Inject, Injectable } from '@nestjs/common';
import { eq } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { formPermissions } from '../database/schema';
import { FORM_PERMISSIONS, type FormPermissionName } from './form-permission-names';

export type Grants = Record<string, FormPermissionName[]>;
export interface FormPermissionsRow {
  configId: string;
  roles: Grants;
  users: Grants;
}

/** Stored names that are no (longer a) permission are dropped on the way out. */
function typedGrants(stored: Record<string, string[]>): Grants {
  return Object.fromEntries(
    Object.entries(stored).map(([key, names]) => [
      key,
      names.filter((name): name is FormPermissionName =>
        (FORM_PERMISSIONS as readonly string[]).includes(name),
      ),
    ]),
  );
}

@Injectable()
export class FormPermissionsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async findByConfig(configId: string): Promise<FormPermissionsRow | null> {
    const [row] = await this.db
      .select()
      .from(formPermissions)
      .where(eq(formPermissions.configId, configId))
      .limit(1);
    return row
      ? { configId: row.configId, roles: typedGrants(row.roles), users: typedGrants(row.users) }
      : null;
  }

  /** Replaces the grants of a configuration (insert or update in one statement). */
  async replace(configId: string, grants: { roles: Grants; users: Grants }): Promise<FormPermissionsRow> {
    const [row] = await this.db
      .insert(formPermissions)
      .values({ configId, ...grants })
      .onConflictDoUpdate({ target: formPermissions.configId, set: { ...grants, updatedAt: new Date() } })
      .returning();
    return { configId: row.configId, roles: typedGrants(row.roles), users: typedGrants(row.users) };
  }
}
