import { Inject, Logger } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { EVENT_TYPES, type DomainEvent } from '../../events/domain-event';
import type { EventInterest } from '../../events/event-interest';
import { EventConsumer, type EventConsumer as Consumer } from '../../events/event-consumer';
import { derivedRunId } from '../engine/derived-run-id';
import { RunCaller } from '../engine/run-caller';
import { parseRunRequest } from '../engine/stored-state';
import { WorkflowQueueWorker } from '../engine/workflow-queue.worker';
import { WorkflowRunner } from '../engine/workflow-runner.service';
import { WorkflowRunsRepository } from '../workflow-runs.repository';
import { WorkflowsService } from '../workflows.service';
import {
  originRunOf,
  triggeredRunInput,
  triggerInterests,
  triggersOn,
  type TriggeredWorkflow,
} from './trigger-matching';

/** Where an event sits in a chain of triggers: the workflow of the run that caused it, and its depth. */
interface Cause {
  workflowId: string | null;
  depth: number;
}

/**
 * Event-triggered workflows: for each event, every active workflow whose definition has a matching
 * trigger gets one queued run, as the user who caused the event (checked as an execute request is:
 * active account, `workflows:execute`, the workflow's permissions, `executeWorkflows` on the form),
 * with the record as `input` and `savedData`. The run's id is derived from the event and the
 * workflow, so an event handed out twice queues one run. A run's own changes do not trigger its own
 * workflow again, and a chain of triggers stops at WORKFLOW_TRIGGER_MAX_DEPTH.
 */
@EventConsumer('workflow-triggers')
export class WorkflowTriggerConsumer implements Consumer {
  private readonly logger = new Logger(WorkflowTriggerConsumer.name);

  constructor(
    private readonly workflows: WorkflowsService,
    private readonly runs: WorkflowRunsRepository,
    private readonly caller: RunCaller,
    private readonly runner: WorkflowRunner,
    private readonly queue: WorkflowQueueWorker,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async interests(): Promise<EventInterest[]> {
    const workflows = await this.workflows.triggeredBy([...EVENT_TYPES]);
    return workflows.flatMap((workflow) => triggerInterests(workflow.config));
  }

  async consume(events: DomainEvent[]): Promise<void> {
    const candidates = await this.workflows.triggeredBy([...new Set(events.map((event) => event.type))]);
    if (candidates.length === 0) return;
    let queued = 0;
    for (const event of events) {
      const matching = candidates.filter((workflow) => triggersOn(workflow, event));
      if (matching.length === 0) continue;
      const cause = await this.causeOf(event);
      for (const workflow of matching) if (await this.queueRun(event, workflow, cause)) queued++;
    }
    if (queued > 0) void this.queue.poll();
  }

  /** Queues the workflow's run for the event unless a rule refuses it; true when a run was queued. */
  private async queueRun(event: DomainEvent, workflow: TriggeredWorkflow, cause: Cause): Promise<boolean> {
    const skip = (reason: string) => {
      this.logger.warn({
        msg: `workflow ${workflow.id} not triggered by ${event.type} event ${event.id}: ${reason}`,
        workflowId: workflow.id,
        eventId: event.id,
        event: event.type,
      });
      return false;
    };
    // A run's own save (or its own end) would start the same workflow again, for ever.
    if (cause.workflowId === workflow.id) return false;
    const depth = cause.depth + 1;
    if (depth > this.config.workflowTriggerMaxDepth)
      return skip(
        `the chain of triggers is at its limit (WORKFLOW_TRIGGER_MAX_DEPTH ${this.config.workflowTriggerMaxDepth})`,
      );
    const input = triggeredRunInput(event);
    if (!input || !event.actorId) return skip('the event names no configuration or no user');
    try {
      const ctx = await this.caller.recheck(
        {
          actor: { userId: event.actorId, email: '', role: '', siteId: null },
          siteId: event.siteId,
          locale: 'en',
          requestId: event.id,
          configId: input.body.configId,
        },
        workflow.id,
      );
      return await this.runner.enqueueTriggered(
        ctx,
        workflow.id,
        input.body,
        { trigger: { eventId: event.id, event: event.type, depth }, savedData: input.savedData },
        derivedRunId(event.id, workflow.id),
      );
    } catch (error) {
      // The user may not run it (any more): the event is not theirs to act on. Anything else (the
      // database away, a damaged row) hands the batch out again later, so no trigger is lost.
      if (error instanceof AppError && error.status < 500)
        return skip(`the user may not run it (${error.code})`);
      throw error;
    }
  }

  /** The run the event came from (if any) and its depth in a chain of triggers. */
  private async causeOf(event: DomainEvent): Promise<Cause> {
    const runId = originRunOf(event);
    const run = runId ? await this.runs.findById(runId) : null;
    if (!run) return { workflowId: null, depth: 0 };
    return { workflowId: run.workflowId, depth: parseRunRequest(run.request).trigger?.depth ?? 0 };
  }
}
