import { Injectable } from '@nestjs/common';
import { Metrics } from '../common/metrics/metrics.service';
import type { QueueState } from './engine/queue/run-queue.repository';
import { WorkflowRunsService, type OutboxState } from './runs/workflow-runs.service';

/** A scrape waits no longer than this for the database; the gauges then keep their last values. */
const READ_TIMEOUT_MS = 2000;

/**
 * Gauges read from the database when scraped, never on a request's path: the queue (`state` =
 * queued, due, running), the age of its oldest due run, and the outbox's effects by state. A read
 * that fails or takes too long (the database is away) leaves the last values, so the scrape still
 * answers.
 */
@Injectable()
export class WorkflowGauges {
  /** The read in flight: the two queue gauges are collected together and share one query. */
  private queueRead: Promise<QueueState | null> | null = null;

  constructor(metrics: Metrics, runs: WorkflowRunsService) {
    const readQueue = () => {
      this.queueRead ??= bounded(runs.queueState()).finally(() => (this.queueRead = null));
      return this.queueRead;
    };
    metrics.gauge({
      name: 'workflow_queue_runs',
      help: 'Workflow runs by queue state: queued (waiting, due or not), due (a worker may take them now), running',
      labelNames: ['state'],
      async collect() {
        const state = await readQueue();
        if (!state) return;
        this.set({ state: 'queued' }, state.queued);
        this.set({ state: 'due' }, state.due);
        this.set({ state: 'running' }, state.running);
      },
    });
    metrics.gauge({
      name: 'workflow_queue_oldest_due_seconds',
      help: 'How long the oldest run a worker may take has waited (0 when none is due)',
      async collect() {
        const state = await readQueue();
        if (state) this.set(state.oldestDueSeconds);
      },
    });
    metrics.gauge({
      name: 'workflow_outbox_effects',
      help: 'Workflow effects (mails, ...) in the outbox by state: pending, sent, failed',
      labelNames: ['state'],
      async collect() {
        const counts = await bounded(runs.outboxState());
        if (!counts) return;
        for (const state of Object.keys(counts) as OutboxState[]) this.set({ state }, counts[state]);
      },
    });
  }
}

/** The value, or null when the read failed or did not answer within READ_TIMEOUT_MS. */
async function bounded<T>(read: Promise<T>): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), READ_TIMEOUT_MS);
    timer.unref();
  });
  try {
    return await Promise.race([read.catch(() => null), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
