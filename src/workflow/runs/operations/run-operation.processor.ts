import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { contextOfKept, type KeptRequest } from '../../../common/context/kept-request';
import type { RequestContext } from '../../../common/context/request-context';
import { AppError } from '../../../common/errors/app-error';
import { LeasedWork } from '../../../common/lifecycle/leased-work';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config';
import { isUniqueViolation } from '../../../database/unique-violation';
import type { RerunBody } from '../../engine/run-replay';
import { WorkflowClock } from '../../engine/workflow-clock';
import { WORKFLOW_INSTANCE } from '../../engine/queue/workflow-instance';
import { WorkflowRunner } from '../../engine/workflow-runner.service';
import { WorkflowRunsService } from '../workflow-runs.service';
import { operationRunId } from './operation-run-id';
import { RunOperationsRepository, type RunOperationRow } from './run-operations.repository';

/** What an operation keeps of its request: the admin who asked (every run is handled as them). */
export interface OperationRequest extends KeptRequest {
  filter: Record<string, unknown>;
  rerun?: RerunBody;
}

/**
 * Works through bulk operations: the accepting instance starts one at once (in the background);
 * every instance with workers takes over an operation whose lease expired (its instance died or
 * stopped), from where its counters stand. Each run is handled through the same service calls as
 * the single-run routes, as the admin who asked: a cancel is the cancel route's, a re-run is queued
 * (`Prefer: respond-async`) at the pace the admin's WORKFLOW_MAX_QUEUED_PER_USER allows. A run
 * handled again after a crash is not repeated: a re-run gets an id of its own per operation and
 * run, and a run found cancelled already counts as done.
 */
@Injectable()
export class RunOperationProcessor extends LeasedWork<RunOperationRow> implements OnApplicationBootstrap {
  constructor(
    private readonly operations: RunOperationsRepository,
    private readonly runs: WorkflowRunsService,
    private readonly runner: WorkflowRunner,
    private readonly clock: WorkflowClock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WORKFLOW_INSTANCE) private readonly instance: string,
  ) {
    super('workflow operation');
  }

  onApplicationBootstrap(): void {
    if (this.config.workflowWorkers === 0) return;
    this.takeOverEvery(Math.max(this.config.workflowPollMs, 1000));
  }

  /** Works through an operation this instance holds, in the background. */
  start(operation: RunOperationRow): void {
    void this.startWork(operation);
  }

  protected claimAbandoned(): Promise<RunOperationRow | null> {
    return this.operations.claimAbandoned(this.instance, this.config.workflowLeaseMs);
  }

  protected async process(operation: RunOperationRow): Promise<void> {
    const request = operation.request as unknown as OperationRequest;
    const ctx = contextOfKept(request);
    const leaseMs = this.config.workflowLeaseMs;
    for (let index = operation.done + operation.failed; index < operation.runIds.length; index++) {
      if (this.stopping) return;
      const runId = operation.runIds[index];
      const failed = await this.handle(operation, request, ctx, runId);
      // Lost: another instance took the operation over (this one was too slow); it goes on from there.
      if (!(await this.operations.count(operation.id, this.instance, leaseMs, { failed }))) return;
    }
    await this.operations.finish(operation.id, this.instance);
  }

  /** One run: null when handled, else its code. A database outage stops the operation (taken over later). */
  private async handle(
    operation: RunOperationRow,
    request: OperationRequest,
    ctx: RequestContext,
    runId: string,
  ): Promise<{ runId: string; code: string } | null> {
    try {
      if (operation.kind === 'rerun') await this.rerun(operation, request, ctx, runId);
      else await this.cancel(ctx, runId);
      return null;
    } catch (error) {
      if (error instanceof AppError && error.status < 500) return { runId, code: error.code };
      throw error;
    }
  }

  private async cancel(ctx: RequestContext, runId: string): Promise<void> {
    try {
      await this.runs.cancel(ctx, runId);
    } catch (error) {
      // Cancelled already (by its user, or by this operation before a crash): done all the same.
      const finished = error instanceof AppError && error.code === 'WORKFLOW_RUN_FINISHED';
      if (finished && (await this.runs.get(ctx, runId)).status === 'cancelled') return;
      throw error;
    }
  }

  private async rerun(
    operation: RunOperationRow,
    request: OperationRequest,
    ctx: RequestContext,
    runId: string,
  ): Promise<void> {
    const body = request.rerun ?? { from: 'start', definition: 'original' };
    for (;;) {
      try {
        await this.runner.rerun(ctx, runId, body, true, operationRunId(operation.id, runId));
        return;
      } catch (error) {
        // Queued by this operation before a crash.
        if (isUniqueViolation(error)) return;
        const full = error instanceof AppError && error.code === 'WORKFLOW_QUEUE_FULL';
        if (!full) throw error;
        // Not a failure of this run: the next instance to take the operation over retries it.
        if (this.stopping) throw new Error('shutting down while the queue is full');
        // The admin's queue is full: wait for room, keeping the operation's lease.
        if (!(await this.operations.extendLease(operation.id, this.instance, this.config.workflowLeaseMs)))
          throw new AppError('WORKFLOW_LEASE_LOST');
        await this.clock.sleep(this.config.workflowPollMs);
      }
    }
  }
}
