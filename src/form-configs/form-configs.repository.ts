import { Inject, Injectable } from '@nestjs/common';
import { and, asc, count, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { siteCondition, type SiteScope } from '../common/context/site-scope';
import { isUuid } from '../common/validation/is-uuid';
import { DATABASE, type Database } from '../database/database.types';
import { formConfigs, formConfigVersions } from '../database/schema';
import { changedParts, versionRowOf, type VersionOrigin } from './form-config-versions.repository';

import type { ConfigRow } from './config-row';

export type { ConfigRow };
export type NewConfig = typeof formConfigs.$inferInsert;
export type ConfigChanges = Partial<
  Omit<NewConfig, 'id' | 'createdAt' | 'isActive' | 'createdBy' | 'version'>
>;

/** The active row, at one of `versions` when given (a conditional write: the check is in the update). */
function activeAt(id: string, versions: number[] | null): SQL | undefined {
  return and(
    eq(formConfigs.id, id),
    eq(formConfigs.isActive, true),
    versions === null ? undefined : inArray(formConfigs.version, versions),
  );
}

@Injectable()
export class FormConfigsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** An active configuration visible in the scope, or null. */
  async findActiveInScope(id: string, scope: SiteScope): Promise<ConfigRow | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.db
      .select()
      .from(formConfigs)
      .where(
        and(eq(formConfigs.id, id), eq(formConfigs.isActive, true), siteCondition(formConfigs.siteId, scope)),
      )
      .limit(1);
    return row ?? null;
  }

  /** Active configurations in the scope, optionally of one type and carrying all the tags. */
  async listActiveInScope(
    scope: SiteScope,
    filter: { type?: string; tags?: string[] },
  ): Promise<{ rows: Pick<ConfigRow, 'id' | 'title' | 'type' | 'tags'>[]; total: number }> {
    const conditions: (SQL | undefined)[] = [
      eq(formConfigs.isActive, true),
      siteCondition(formConfigs.siteId, scope),
    ];
    if (filter.type) conditions.push(eq(formConfigs.type, filter.type));
    if (filter.tags && filter.tags.length > 0) {
      conditions.push(sql`${formConfigs.tags} @> ${JSON.stringify(filter.tags)}::jsonb`);
    }
    const where = and(...conditions);
    const [rows, [{ total }]] = await Promise.all([
      this.db
        .select({
          id: formConfigs.id,
          title: formConfigs.title,
          type: formConfigs.type,
          tags: formConfigs.tags,
        })
        .from(formConfigs)
        .where(where)
        .orderBy(asc(formConfigs.title), asc(formConfigs.id)),
      this.db.select({ total: count() }).from(formConfigs).where(where),
    ]);
    return { rows, total: Number(total) };
  }

  /** Inserts a configuration with its version 1 (form_config_versions), in one transaction. */
  async insert(config: NewConfig): Promise<ConfigRow> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx.insert(formConfigs).values(config).returning();
      const origin: VersionOrigin = { action: 'created', authorId: config.createdBy ?? null };
      await tx.insert(formConfigVersions).values(versionRowOf(row, origin, []));
      return row;
    });
  }

  /**
   * Updates the active configuration while it is at `current`'s version (the one the changes were
   * made from), raising it by one, and keeps the new version (with the parts that changed from
   * `current`) in the same transaction; null when it is not (changed or deleted meanwhile).
   */
  async updateActive(
    current: ConfigRow,
    changes: ConfigChanges,
    origin: VersionOrigin,
  ): Promise<ConfigRow | null> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .update(formConfigs)
        .set({ ...changes, version: sql`${formConfigs.version} + 1`, updatedAt: new Date() })
        .where(activeAt(current.id, [current.version]))
        .returning();
      if (!row) return null;
      await tx.insert(formConfigVersions).values(versionRowOf(row, origin, changedParts(current, row)));
      return row;
    });
  }

  /** Deactivates (version + 1); with `versions`, only while at one of them (If-Match). */
  async deactivate(id: string, versions: number[] | null = null): Promise<ConfigRow | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.db
      .update(formConfigs)
      .set({ isActive: false, version: sql`${formConfigs.version} + 1`, updatedAt: new Date() })
      .where(activeAt(id, versions))
      .returning();
    return row ?? null;
  }
}
