import { Inject, Logger } from '@nestjs/common';
import { RecordEventAttachments } from '../../attachments/record-event-attachments';
import { AppError } from '../../common/errors/app-error';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { EVENT_TYPES, type DomainEvent } from '../../events/domain-event';
import type { EventInterest } from '../../events/event-interest';
import { EventConsumer, type EventConsumer as Consumer } from '../../events/event-consumer';
import { derivedRunId } from '../engine/model/derived-run-id';
import { RunCaller } from '../engine/run-caller';
import type { RunTrigger } from '../engine/model/run-model';
import { parseRunRequest } from '../engine/model/stored-state';
import { WorkflowQueueWorker } from '../engine/queue/workflow-queue.worker';
import { WorkflowRunner } from '../engine/workflow-runner.service';
import { WorkflowMetrics, type TriggerSkipReason } from '../workflow-metrics';
import { RunHistoryRepository } from '../runs/run-history.repository';
import { WorkflowsService } from '../definitions/workflows.service';
import {
  originRunOf,
  runAsUserOf,
  triggeredRunInput,
  triggerInterests,
  triggerOn,
  type TriggeredWorkflow,
  type WorkflowTrigger,
} from './trigger-matching';

/** Where an event sits in a chain of triggers: its root event, the workflows passed through, the depth. */
type Cause = Pick<RunTrigger, 'rootEventId' | 'chain' | 'depth'>;

/**
 * Event-triggered workflows: for each event, every active workflow whose definition has a matching
 * trigger gets one queued run, as the trigger's `runAs` user (the record's owner by default),
 * checked as an execute request is (active account, allowed on the event's site,
 * `workflows:execute`, the workflow's permissions, `executeWorkflows` on the form), with the record
 * as `input` and `savedData`. Bounded: a chain of triggers (everything a root event causes) runs
 * each workflow at most once, since the run's id is derived from the root event and the workflow
 * and the workflows a chain passed through are carried with its runs; a chain stops at
 * WORKFLOW_TRIGGER_MAX_DEPTH; a root event causes at most WORKFLOW_TRIGGER_MAX_RUNS_PER_EVENT runs;
 * a user has at most WORKFLOW_TRIGGER_MAX_QUEUED_PER_USER triggered runs queued or running. A
 * trigger kept out is logged and counted, never an error to whoever made the change.
 */
@EventConsumer('workflow-triggers')
export class WorkflowTriggerConsumer implements Consumer {
  private readonly logger = new Logger(WorkflowTriggerConsumer.name);

  constructor(
    private readonly workflows: WorkflowsService,
    private readonly runs: RunHistoryRepository,
    private readonly caller: RunCaller,
    private readonly runner: WorkflowRunner,
    private readonly queue: WorkflowQueueWorker,
    private readonly metrics: WorkflowMetrics,
    private readonly files: RecordEventAttachments,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async interests(): Promise<EventInterest[]> {
    const workflows = await this.workflows.triggeredBy([...EVENT_TYPES]);
    return workflows.flatMap((workflow) => triggerInterests(workflow.config));
  }

  async consume(taken: DomainEvent[]): Promise<void> {
    const candidates = await this.workflows.triggeredBy([...new Set(taken.map((event) => event.type))]);
    if (candidates.length === 0) return;
    // A record's files go with it into the run's `savedData` (README "Attachments").
    const events = await this.files.withAttachments(taken);
    let queued = 0;
    for (const event of events) {
      const matching = candidates.flatMap((workflow) => {
        const trigger = triggerOn(workflow, event);
        return trigger ? [{ workflow, trigger }] : [];
      });
      if (matching.length === 0) continue;
      const cause = await this.causeOf(event);
      for (const { workflow, trigger } of matching)
        if (await this.queueRun(event, workflow, trigger, cause)) queued++;
    }
    if (queued > 0) void this.queue.poll();
  }

  /** Queues the workflow's run for the event unless a rule refuses it; true when a run was queued. */
  private async queueRun(
    event: DomainEvent,
    workflow: TriggeredWorkflow,
    trigger: WorkflowTrigger,
    cause: Cause,
  ): Promise<boolean> {
    const skip = (reason: TriggerSkipReason, why: string) => {
      this.metrics.triggerSkipped(reason);
      this.logger.warn({
        msg: `workflow ${workflow.id} not triggered by ${event.type} event ${event.id}: ${why}`,
        workflowId: workflow.id,
        eventId: event.id,
        event: event.type,
        rootEventId: cause.rootEventId,
        reason,
      });
      return false;
    };
    // A workflow the chain passed through (a run's own save, its own end, a loop across workflows)
    // would start again, for ever: expected often, so counted but not logged above debug.
    if (cause.chain.includes(workflow.id)) {
      this.metrics.triggerSkipped('chain');
      this.logger.debug(`workflow ${workflow.id} not triggered by event ${event.id}: already in its chain`);
      return false;
    }
    const depth = cause.depth + 1;
    const { workflowTriggerMaxDepth: maxDepth, workflowTriggerMaxRunsPerEvent: maxRuns } = this.config;
    if (depth > maxDepth)
      return skip('depth', `the chain of triggers is at its limit (WORKFLOW_TRIGGER_MAX_DEPTH ${maxDepth})`);
    const input = triggeredRunInput(event);
    if (!input) return skip('no_input', 'the event names no configuration');
    const runAs = runAsUserOf(trigger.runAs, event, workflow.authorId);
    if (!runAs) return skip('run_as', `no user to run as (runAs ${JSON.stringify(trigger.runAs)})`);
    try {
      // Through the event's site: the run-as user must be allowed there, as on a request to its host.
      const ctx = await this.caller.recheck(
        {
          actor: { userId: runAs, email: '', role: '', siteId: null },
          siteId: event.siteId,
          locale: 'en',
          requestId: event.id,
          configId: input.body.configId,
        },
        workflow.id,
      );
      const chain = [...cause.chain, workflow.id];
      const outcome = await this.runner.enqueueTriggered(
        ctx,
        workflow.id,
        input.body,
        {
          trigger: { eventId: event.id, event: event.type, depth, rootEventId: cause.rootEventId, chain },
          savedData: input.savedData,
        },
        derivedRunId(cause.rootEventId, workflow.id),
      );
      switch (outcome) {
        case 'queued':
          return true;
        case 'stored_already':
          // The event handed out again, or the workflow already triggered by another branch of the chain.
          return false;
        case 'runs_per_event':
          return skip(
            'runs_per_event',
            `its root event caused ${maxRuns} runs (WORKFLOW_TRIGGER_MAX_RUNS_PER_EVENT)`,
          );
        case 'queued_per_user':
          return skip(
            'queued_per_user',
            `user ${runAs} has ${this.config.workflowTriggerMaxQueuedPerUser} triggered runs queued or running (WORKFLOW_TRIGGER_MAX_QUEUED_PER_USER)`,
          );
      }
    } catch (error) {
      // The run-as user may not run it (any more): no run. Anything else (the database away, a
      // damaged row) hands the batch out again later, so no trigger is lost.
      if (error instanceof AppError && error.status < 500)
        return skip('run_as', `user ${runAs} may not run it (${error.code})`);
      throw error;
    }
  }

  /**
   * The chain the event belongs to: a change made outside any triggered run is a root (its own
   * root, no workflows passed through, depth 0); a change made by a run (or a run's end) continues
   * that run's chain, with the run's own workflow added.
   */
  private async causeOf(event: DomainEvent): Promise<Cause> {
    const runId = originRunOf(event);
    const run = runId ? await this.runs.findById(runId) : null;
    if (!run) return { rootEventId: event.id, chain: [], depth: 0 };
    const trigger = parseRunRequest(run.request).trigger;
    const passed = trigger?.chain ?? [];
    return {
      rootEventId: trigger?.rootEventId ?? event.id,
      chain: passed.includes(run.workflowId) ? passed : [...passed, run.workflowId],
      depth: trigger?.depth ?? 0,
    };
  }
}
