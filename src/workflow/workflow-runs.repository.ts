import { Inject, Injectable } from '@nestjs/common';
import { and, count, desc, eq, type SQL } from 'drizzle-orm';
import { isUuid } from '../common/validation/is-uuid';
import { DATABASE, type Database } from '../database/database.types';
import { workflowRuns } from '../database/schema';
import type { RunStatus } from './dto/workflow-response.dto';

export type WorkflowRunRow = typeof workflowRuns.$inferSelect;

export interface RunStart {
  workflowId: string;
  userId: string | null;
  siteId: string | null;
  configId: string | null;
}

export interface RunFinish {
  status: Exclude<RunStatus, 'running'>;
  message: string;
  steps: unknown[];
  dataId: string | null;
  durationMs: number;
}

@Injectable()
export class WorkflowRunsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** Records a run as `running` before its first step, so a crash leaves a trace. */
  async start(run: RunStart): Promise<WorkflowRunRow> {
    const [row] = await this.db
      .insert(workflowRuns)
      .values({ ...run, status: 'running', startedAt: new Date() })
      .returning();
    return row;
  }

  async finish(id: string, outcome: RunFinish): Promise<void> {
    await this.db
      .update(workflowRuns)
      .set({ ...outcome, finishedAt: new Date() })
      .where(eq(workflowRuns.id, id));
  }

  async findById(id: string): Promise<WorkflowRunRow | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.db.select().from(workflowRuns).where(eq(workflowRuns.id, id)).limit(1);
    return row ?? null;
  }

  /** A page of a workflow's runs, newest first; only `userId`'s when given. */
  async pageOfWorkflow(
    workflowId: string,
    userId: string | null,
    page: { offset: number; limit: number },
  ): Promise<{ rows: WorkflowRunRow[]; total: number }> {
    const conditions: (SQL | undefined)[] = [eq(workflowRuns.workflowId, workflowId)];
    if (userId) conditions.push(eq(workflowRuns.userId, userId));
    const where = and(...conditions);
    const [rows, [{ total }]] = await Promise.all([
      this.db
        .select()
        .from(workflowRuns)
        .where(where)
        .orderBy(desc(workflowRuns.startedAt), desc(workflowRuns.id))
        .offset(page.offset)
        .limit(page.limit),
      this.db.select({ total: count() }).from(workflowRuns).where(where),
    ]);
    return { rows, total: Number(total) };
  }
}
