import { Injectable } from '@nestjs/common';
import { requireUser, type RequestContext } from '../../common/context/request-context';
import { isVisibleInScope, ownSiteScopeOf } from '../../common/context/site-scope';
import { AppError } from '../../common/errors/app-error';
import type { WorkflowRunDto } from '../dto/workflow-response.dto';
import { WorkflowEffectsRepository } from '../effects/workflow-effects.repository';
import type { WaitingAt } from '../engine/model/run-model';
import { parseRunRequest, parseStepLogs } from '../engine/model/stored-state';
import { toRunResponse } from '../workflow.mapper';
import type { WorkflowRunRow } from '../engine/model/run-records';
import { RunQueueRepository } from '../engine/queue/run-queue.repository';
import { RunHistoryRepository } from './run-history.repository';

export interface DecisionBody {
  approve: boolean;
  comment?: string;
}

/**
 * Decisions on runs waiting at a step (an `approval`): who may decide is what the step named when
 * the run paused (its roles and users; admins always), but never the run's own starter unless
 * named by id or the step allows self-approval (separation of duties). The decision, with who
 * decided and whose run it is, is stored with the run, which is queued at once; a worker resumes
 * it and the step takes the decision as its result.
 */
@Injectable()
export class RunDecisionsService {
  constructor(
    private readonly runs: RunHistoryRepository,
    private readonly queue: RunQueueRepository,
    private readonly effects: WorkflowEffectsRepository,
  ) {}

  /**
   * 404: no such run in the caller's site scope; 409: not waiting at `step` (or decided already);
   * 403: the caller may not decide (FORBIDDEN), or may but started the run themselves
   * (WORKFLOW_SELF_APPROVAL_FORBIDDEN). The run's state is judged before the caller, so a decider
   * who comes second learns that it was decided.
   */
  async decide(
    ctx: RequestContext,
    runId: string,
    step: string,
    body: DecisionBody,
  ): Promise<WorkflowRunDto> {
    const user = requireUser(ctx);
    const run = await this.runs.findById(runId);
    if (!run || !isVisibleInScope(run.siteId, ownSiteScopeOf(ctx)))
      throw new AppError('WORKFLOW_RUN_NOT_FOUND');
    const waiting = waitingAt(run);
    if (run.status !== 'waiting' || waiting?.step !== step) {
      throw new AppError(decided(run, step) ? 'WORKFLOW_APPROVAL_DECIDED' : 'WORKFLOW_RUN_NOT_WAITING', {
        params: { step },
      });
    }
    const { roles, users, allowSelfApproval = false } = waiting.deciders;
    const named = users.includes(user.userId);
    if (user.role !== 'admin' && !roles.includes(user.role) && !named) throw new AppError('FORBIDDEN');
    const starter = parseRunRequest(run.request).actor;
    if (starter.userId === user.userId && !named && !allowSelfApproval)
      throw new AppError('WORKFLOW_SELF_APPROVAL_FORBIDDEN', { params: { step } });
    const updated = await this.queue.signalWaiting(run.id, step, {
      index: waiting.index,
      kind: 'decision',
      approve: body.approve,
      comment: body.comment ?? null,
      decidedBy: { userId: user.userId, email: user.email },
      decidedAt: new Date().toISOString(),
      startedBy: { userId: starter.userId, email: starter.email },
    });
    // Another decision, the deadline or a cancellation came first.
    if (!updated) throw new AppError('WORKFLOW_APPROVAL_DECIDED', { params: { step } });
    return toRunResponse(updated, await this.effects.ofRuns([run.id]));
  }
}

function waitingAt(run: WorkflowRunRow): WaitingAt | null {
  const waiting = (run.checkpoint as { waiting?: WaitingAt | null } | null)?.waiting;
  return waiting && typeof waiting.step === 'string' && waiting.deciders ? waiting : null;
}

/** The step was decided: a decision waits to be taken, or the step ran with one. */
function decided(run: WorkflowRunRow, step: string): boolean {
  const checkpoint = run.checkpoint as { waiting?: WaitingAt | null; signal?: unknown } | null;
  if (checkpoint?.signal && checkpoint.waiting?.step === step) return true;
  return parseStepLogs(run.steps).some(
    (log) =>
      log.name === step && typeof (log.result as { approved?: unknown } | null)?.approved === 'boolean',
  );
}
