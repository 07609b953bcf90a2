import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { requireUser, type RequestContext } from '../../common/context/request-context';
import { siteOfNewRecord } from '../../common/context/site-scope';
import { FormAccessService } from '../../permissions/form-access.service';
import type { NewRun } from '../workflow-runs.repository';
import { WorkflowsService } from '../workflows.service';
import type { WorkflowRow } from '../workflows.repository';
import type { RunRequest } from './run-model';
import { activeTraceparent } from './run-tracing';
import { WorkflowClock } from './workflow-clock';

/** What an execute request names: the form and the data. */
export interface ExecuteBody {
  configId: string;
  data: Record<string, unknown>;
}

/** A run as the launcher prepared it: checked, not stored yet. */
export interface LaunchedRun {
  run: NewRun;
  request: RunRequest;
  workflow: WorkflowRow;
  startedAt: number;
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
    private readonly clock: WorkflowClock,
  ) {}

  async launch(
    ctx: RequestContext,
    workflowId: string,
    body: ExecuteBody,
    mode: RunRequest['mode'],
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
    };
    return { run, request, workflow, startedAt };
  }
}
