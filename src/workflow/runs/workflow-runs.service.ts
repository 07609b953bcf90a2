import { Injectable } from '@nestjs/common';
import { requireUser, type RequestContext } from '../../common/context/request-context';
import { isVisibleInScope, ownSiteScopeOf } from '../../common/context/site-scope';
import { AppError } from '../../common/errors/app-error';
import type { RunHistoryQueryDto, RunListQueryDto } from '../dto/run-history-query.dto';
import type { WorkflowRunDto, WorkflowRunPageDto } from '../dto/workflow-response.dto';
import { WorkflowMetrics } from '../workflow-metrics';
import { toRunResponse } from '../workflow.mapper';
import { WorkflowEffectsRepository } from '../effects/workflow-effects.repository';
import type { WorkflowRunRow } from '../engine/model/run-records';
import { RunJournalRepository } from '../engine/journal/run-journal.repository';
import { RunQueueRepository, type QueueState } from '../engine/queue/run-queue.repository';
import { RunHistoryRepository } from './run-history.repository';
import { WorkflowsService } from '../definitions/workflows.service';

export type OutboxState = 'pending' | 'sent' | 'failed';

/**
 * Run history: admins see every run; a user sees the runs they started, of their site only (runs,
 * like records, belong to the site they were started through: see `ownSiteScopeOf`).
 */
@Injectable()
export class WorkflowRunsService {
  constructor(
    private readonly runs: RunHistoryRepository,
    private readonly journal: RunJournalRepository,
    private readonly queue: RunQueueRepository,
    private readonly workflows: WorkflowsService,
    private readonly effects: WorkflowEffectsRepository,
    private readonly metrics: WorkflowMetrics,
  ) {}

  async history(
    ctx: RequestContext,
    workflowId: string,
    query: RunHistoryQueryDto,
  ): Promise<WorkflowRunPageDto> {
    const workflow = await this.workflows.requireVisible(ctx, workflowId);
    return this.page(ctx, workflow.id, query);
  }

  /** Runs of every workflow (`?status=waiting`: those waiting for a decision), by the same rules. */
  list(ctx: RequestContext, query: RunListQueryDto): Promise<WorkflowRunPageDto> {
    return this.page(ctx, null, query);
  }

  private async page(
    ctx: RequestContext,
    workflowId: string | null,
    query: RunListQueryDto,
  ): Promise<WorkflowRunPageDto> {
    const user = requireUser(ctx);
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    const { rows, total } = await this.runs.pageOfWorkflow(
      workflowId,
      { userId: user.role === 'admin' ? null : user.userId, site: ownSiteScopeOf(ctx) },
      { offset: (page - 1) * limit, limit, status: query.status },
    );
    const effects = await this.effects.ofRuns(rows.map((row) => row.id));
    const data = rows.map((row) =>
      toRunResponse(
        row,
        effects.filter((effect) => effect.runId === row.id),
      ),
    );
    return { data, totalCount: total, page, pages: Math.ceil(total / limit) };
  }

  /** Someone else's run is a 404 to a non-admin: its existence is not revealed. */
  async get(ctx: RequestContext, runId: string): Promise<WorkflowRunDto> {
    const run = await this.requireVisible(ctx, runId);
    return toRunResponse(run, await this.effects.ofRuns([run.id]));
  }

  /**
   * A queued run never starts; a running one stops before its next step or retry attempt (a wait
   * for a retry ends) and ends `cancelled`, compensated first when its strategy is rollback.
   * A finished run is a 409.
   */
  async cancel(ctx: RequestContext, runId: string): Promise<WorkflowRunDto> {
    const run = await this.requireVisible(ctx, runId);
    if (!['queued', 'running', 'waiting'].includes(run.status)) throw new AppError('WORKFLOW_RUN_FINISHED');
    const updated = (await this.journal.requestCancel(run.id)) ?? (await this.runs.findById(run.id));
    // A queued run that never started ends here; any other ends in its drive, which counts it.
    if (run.status === 'queued' && updated?.status === 'cancelled')
      this.metrics.runFinished(run.workflowId, 'cancelled');
    return toRunResponse(updated ?? run, await this.effects.ofRuns([run.id]));
  }

  /**
   * The queue's depth and the age of its oldest due run, for the metrics scrape (no caller: an
   * operator's view of the whole instance group, never on a request's path).
   */
  queueState(): Promise<QueueState> {
    return this.queue.queueState();
  }

  /** The outbox's effects by state (`pending`, `sent`, `failed`), for the metrics scrape. */
  async outboxState(): Promise<Record<OutboxState, number>> {
    const counts = await this.effects.countByState();
    return { pending: counts.pending ?? 0, sent: counts.sent ?? 0, failed: counts.failed ?? 0 };
  }

  /** A run the caller may read (admins: any in the site scope; others: their own), else a 404. */
  async requireVisible(ctx: RequestContext, runId: string): Promise<WorkflowRunRow> {
    const user = requireUser(ctx);
    const run = await this.runs.findById(runId);
    if (
      !run ||
      !isVisibleInScope(run.siteId, ownSiteScopeOf(ctx)) ||
      (user.role !== 'admin' && run.userId !== user.userId)
    )
      throw new AppError('WORKFLOW_RUN_NOT_FOUND');
    return run;
  }
}
