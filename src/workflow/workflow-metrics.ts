import { Injectable } from '@nestjs/common';
import type { Counter, Histogram } from 'prom-client';
import { DURATION_BUCKETS, Metrics } from '../common/metrics/metrics.service';

/** Why an event did not queue a workflow's run (README "Event-triggered workflows"). */
export type TriggerSkipReason =
  'chain' | 'depth' | 'runs_per_event' | 'queued_per_user' | 'run_as' | 'no_input';

/**
 * The counters of runs and steps, counted where a run starts and ends and where a step finishes:
 * runs started by workflow and mode, runs finished by workflow and final status, step duration by
 * step type and status, triggers skipped by reason. Workflow ids as labels are bounded by the
 * number of definitions. Nothing is counted with metrics off, and nothing here is on the path of a
 * record create.
 */
@Injectable()
export class WorkflowMetrics {
  private readonly enabled: boolean;
  private readonly started: Counter<'workflow' | 'mode'>;
  private readonly finished: Counter<'workflow' | 'status'>;
  private readonly stepDuration: Histogram<'type' | 'status'>;
  private readonly triggersSkipped: Counter<'reason'>;

  constructor(metrics: Metrics) {
    this.enabled = metrics.enabled;
    this.started = metrics.counter({
      name: 'workflow_runs_started_total',
      help: 'Workflow runs started, by workflow id and mode (sync: inside the request, async: queued)',
      labelNames: ['workflow', 'mode'],
    });
    this.finished = metrics.counter({
      name: 'workflow_runs_finished_total',
      help: 'Workflow runs finished, by workflow id and final status',
      labelNames: ['workflow', 'status'],
    });
    this.stepDuration = metrics.histogram({
      name: 'workflow_step_duration_seconds',
      help: 'Workflow steps by step type and final status (all attempts and waits of the step)',
      labelNames: ['type', 'status'],
      buckets: DURATION_BUCKETS,
    });
    this.triggersSkipped = metrics.counter({
      name: 'workflow_triggers_skipped_total',
      help: 'Triggered runs not queued, by reason (chain, depth, runs_per_event, queued_per_user, run_as, no_input)',
      labelNames: ['reason'],
    });
  }

  runStarted(workflowId: string, mode: 'sync' | 'async'): void {
    if (this.enabled) this.started.inc({ workflow: workflowId, mode });
  }

  runFinished(workflowId: string, status: string): void {
    if (this.enabled) this.finished.inc({ workflow: workflowId, status });
  }

  triggerSkipped(reason: TriggerSkipReason): void {
    if (this.enabled) this.triggersSkipped.inc({ reason });
  }

  stepFinished(type: string, status: string, durationMs: number): void {
    if (this.enabled) this.stepDuration.observe({ type, status }, durationMs / 1000);
  }
}
