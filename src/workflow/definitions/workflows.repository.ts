import { Inject, Injectable } from '@nestjs/common';
import { and, asc, count, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { siteCondition, type SiteScope } from '../../common/context/site-scope';
import { isUuid } from '../../common/validation/is-uuid';
import { DATABASE, type Database } from '../../database/database.types';
import { workflows, workflowVersions } from '../../database/schema';

export type WorkflowRow = typeof workflows.$inferSelect;
export type NewWorkflow = typeof workflows.$inferInsert;
export type WorkflowChanges = Partial<Omit<NewWorkflow, 'id' | 'createdAt' | 'version'>>;
export type WorkflowVersionRow = typeof workflowVersions.$inferSelect;

export interface WorkflowListFilter {
  type?: string;
  tags?: string[];
  isActive: boolean;
  /** Only workflows a non-admin may run: their role or their id is named in `permissions`. */
  runnableBy?: { role: string; userId: string };
}

@Injectable()
export class WorkflowsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async findById(id: string): Promise<WorkflowRow | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.db.select().from(workflows).where(eq(workflows.id, id)).limit(1);
    return row ?? null;
  }

  async listInScope(
    scope: SiteScope,
    filter: WorkflowListFilter,
  ): Promise<{ rows: WorkflowRow[]; total: number }> {
    const conditions: (SQL | undefined)[] = [
      eq(workflows.isActive, filter.isActive),
      siteCondition(workflows.siteId, scope),
    ];
    if (filter.type) conditions.push(eq(workflows.type, filter.type));
    if (filter.tags && filter.tags.length > 0)
      conditions.push(sql`${workflows.tags} @> ${JSON.stringify(filter.tags)}::jsonb`);
    if (filter.runnableBy)
      conditions.push(
        sql`(${workflows.permissions} -> 'roles' ? ${filter.runnableBy.role} or ${workflows.permissions} -> 'users' ? ${filter.runnableBy.userId})`,
      );
    const where = and(...conditions);
    const [rows, [{ total }]] = await Promise.all([
      this.db.select().from(workflows).where(where).orderBy(asc(workflows.name), asc(workflows.id)),
      this.db.select({ total: count() }).from(workflows).where(where),
    ]);
    return { rows, total: Number(total) };
  }

  /** The active workflows with a trigger on one of `events` (their definition's `triggers`). */
  async activeTriggeredBy(events: string[]): Promise<WorkflowRow[]> {
    if (events.length === 0) return [];
    return this.db
      .select()
      .from(workflows)
      .where(
        and(
          eq(workflows.isActive, true),
          sql`exists (select 1 from jsonb_array_elements(case when jsonb_typeof(${workflows.config} -> 'triggers') = 'array'
            then ${workflows.config} -> 'triggers' else '[]'::jsonb end) as t
            where t ->> 'event' = any(${sql.param(events)}::text[]))`,
        ),
      )
      .orderBy(asc(workflows.id));
  }

  /** Stores a new workflow and its version 1, made by `savedBy`, in one transaction. */
  async insert(workflow: NewWorkflow, savedBy: string | null): Promise<WorkflowRow> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx.insert(workflows).values(workflow).returning();
      await tx.insert(workflowVersions).values(versionOf(row, savedBy));
      return row;
    });
  }

  /** A workflow's kept versions, newest first. */
  async versionsOf(workflowId: string): Promise<WorkflowVersionRow[]> {
    return this.db
      .select()
      .from(workflowVersions)
      .where(eq(workflowVersions.workflowId, workflowId))
      .orderBy(desc(workflowVersions.version));
  }

  /**
   * Updates the active workflow, raising its version, and keeps the new version (made by
   * `savedBy`) in the same transaction; with `versions` (If-Match) only while it is at one of them,
   * checked in the update itself. Null when there is no such row.
   */
  async updateActive(
    id: string,
    changes: WorkflowChanges,
    savedBy: string | null,
    versions: number[] | null = null,
  ): Promise<WorkflowRow | null> {
    if (!isUuid(id)) return null;
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .update(workflows)
        // Every update is a new version of the definition (a run keeps the one it ran with).
        .set({ ...changes, version: sql`${workflows.version} + 1`, updatedAt: new Date() })
        .where(
          and(
            eq(workflows.id, id),
            eq(workflows.isActive, true),
            versions === null ? undefined : inArray(workflows.version, versions),
          ),
        )
        .returning();
      if (row) await tx.insert(workflowVersions).values(versionOf(row, savedBy));
      return row ?? null;
    });
  }
}

/** The version a stored workflow row is at, as kept in workflow_versions. */
function versionOf(row: WorkflowRow, savedBy: string | null): typeof workflowVersions.$inferInsert {
  return {
    workflowId: row.id,
    version: row.version,
    name: row.name,
    alias: row.alias,
    description: row.description,
    type: row.type,
    config: row.config,
    permissions: row.permissions,
    tags: row.tags,
    siteId: row.siteId,
    isActive: row.isActive,
    authorId: row.authorId,
    savedBy,
    savedAt: row.updatedAt,
  };
}
