import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { requireUser, type RequestContext } from '../../common/context/request-context';
import { siteOfNewRecord } from '../../common/context/site-scope';
import { AppError } from '../../common/errors/app-error';
import { FormAccessService } from '../../permissions/form-access.service';
import type { NewRun } from './model/run-records';
import { WorkflowRunsService } from '../runs/workflow-runs.service';
import { WorkflowsService } from '../definitions/workflows.service';
import type { WorkflowRow } from '../definitions/workflows.repository';
import type { ExecuteBody, RunRequest } from './model/run-model';
import { activeTraceparent } from './driver/run-tracing';
import { replaySeed, rerunPoint, type ReplaySeed, type RerunBody } from './run-replay';
import { parseCheckpoint, parseDefinition, parseRunRequest, parseStepLogs } from './model/stored-state';
import { WorkflowClock } from './workflow-clock';

const FINISHED: readonly string[] = ['success', 'failed', 'rolled_back', 'cancelled'];

/** A run as the launcher prepared it: checked, not stored yet. */
export interface LaunchedRun {
  run: NewRun;
  request: RunRequest;
  workflow: WorkflowRow;
  startedAt: number;
  /** A re-run's steps taken over from the run it repeats (none for a new run). */
  seed: ReplaySeed;
}

/**
 * Starts runs: checks that the caller may run the workflow (404/403) and execute workflows on the
 * form, and prepares the run request that is stored with the run, so any instance can drive it.
 */
@Injectable()
export class RunLauncher {
  constructor(
    private readonly workflows: WorkflowsService,
    private readonly formAccess: FormAccessService,
    private readonly runs: WorkflowRunsService,
    private readonly clock: WorkflowClock,
  ) {}

  async launch(
    ctx: RequestContext,
    workflowId: string,
    body: ExecuteBody,
    mode: RunRequest['mode'],
    /** A run an event queues: the event and the scope's `savedData` from the start. */
    triggered?: Pick<RunRequest, 'trigger' | 'savedData'>,
  ): Promise<LaunchedRun> {
    const user = requireUser(ctx);
    const workflow = await this.workflows.requireRunnable(ctx, workflowId);
    const { config: form } = await this.formAccess.require(ctx, body.configId, 'executeWorkflows');
    const request: RunRequest = {
      configId: form.id,
      data: body.data,
      formTitle: form.title,
      actor: user,
      siteId: ctx.siteId,
      locale: ctx.locale,
      requestId: ctx.requestId,
      mode,
      // Read when the run is claimed, maybe by another instance: its trace links to this request's.
      ...(mode === 'async' ? { traceparent: activeTraceparent() } : {}),
      ...triggered,
    };
    const startedAt = this.clock.now();
    const run: NewRun = {
      id: randomUUID(),
      workflowId: workflow.id,
      userId: user.userId,
      // The site of the records it saves: the form's, else (a shared form) the request's.
      siteId: siteOfNewRecord(ctx, form.siteId),
      configId: form.id,
      request: { ...request },
      startedAt: new Date(startedAt),
      definition: workflow.config,
      definitionVersion: workflow.version,
      rerunOf: null,
    };
    return { run, request, workflow, startedAt, seed: { nextStep: 0, steps: [] } };
  }

  /**
   * A re-run of a finished run the caller may read: started as `launch` starts a run (the same
   * checks, by the caller, on the same input), with the original or the current definition, and
   * the steps before the chosen point taken over from the earlier run.
   */
  async relaunch(
    ctx: RequestContext,
    runId: string,
    body: RerunBody,
    mode: RunRequest['mode'],
    /** The new run's id (a bulk operation's own, so a repeat after a crash is recognised). */
    newRunId?: string,
  ): Promise<LaunchedRun> {
    const earlier = await this.runs.requireVisible(ctx, runId);
    if (!FINISHED.includes(earlier.status))
      throw new AppError('WORKFLOW_RUN_NOT_FINISHED', { params: { status: earlier.status } });
    const { configId, data } = parseRunRequest(earlier.request);
    const launched = await this.launch(ctx, earlier.workflowId, { configId, data }, mode);
    let { definition, definitionVersion } = launched.run;
    if (body.definition === 'original') {
      if (!earlier.definition || earlier.definitionVersion === null)
        throw new AppError('WORKFLOW_DEFINITION_NOT_KEPT');
      definition = earlier.definition;
      definitionVersion = earlier.definitionVersion;
    }
    const parsed = parseDefinition(definition);
    const logs = parseStepLogs(earlier.steps);
    const seed = replaySeed(
      parsed,
      earlier.definition ? parseDefinition(earlier.definition) : null,
      rerunPoint(parsed, body.from, logs),
      logs,
      earlier.checkpoint ? parseCheckpoint(earlier.checkpoint) : null,
    );
    const id = newRunId ?? launched.run.id;
    const run = { ...launched.run, id, definition, definitionVersion, rerunOf: earlier.id };
    return { ...launched, run, seed };
  }
}
