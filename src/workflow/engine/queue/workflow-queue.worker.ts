import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { causeChain } from '../../../common/errors/cause-chain';
import { settleWithin } from '../../../common/lifecycle/settle-within';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config';
import { DatabaseClient } from '../../../database/database-client';
import { DatabaseHealth } from '../../../database/database-health';
import { isDatabaseUnavailable } from '../../../common/errors/database-unavailable';
import { RunQueueRepository } from './run-queue.repository';
import { WORKFLOW_INSTANCE } from './workflow-instance';
import { heartbeatEveryMs } from '../journal/run-journal';
import { LONGEST_WAIT_MS } from '../driver/transient-retry';
import { WorkflowRunner } from '../workflow-runner.service';

const SHUTDOWN_WAIT_MS = 10_000;

/**
 * Takes queued runs (asynchronous runs, retries whose delay is over) and runs whose process died
 * (expired lease) from the database, up to WORKFLOW_WORKERS at once (old run records go with
 * WorkflowRunRetention).
 * Every instance sharing the database does the same; `FOR UPDATE SKIP LOCKED` gives each run to one.
 */
@Injectable()
export class WorkflowQueueWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WorkflowQueueWorker.name);
  private readonly inFlight = new Set<Promise<void>>();
  private pollTimer?: NodeJS.Timeout;
  private polling = false;
  private stopping = false;

  constructor(
    private readonly runs: RunQueueRepository,
    private readonly runner: WorkflowRunner,
    private readonly database: DatabaseClient,
    private readonly databaseHealth: DatabaseHealth,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WORKFLOW_INSTANCE) private readonly instance: string,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.workflowWorkers === 0) return;
    // The embedded database belongs to one process at a time (the data-directory lock): a run left
    // `running` belonged to a process that is gone, so it resumes now rather than after its lease.
    if (this.database.driver === 'pglite') await this.runs.releaseAllRunning();
    this.pollTimer = setInterval(() => void this.poll(), this.config.workflowPollMs);
    this.pollTimer.unref();
    void this.poll();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    clearInterval(this.pollTimer);
    // A run still going after the wait keeps its lease until it expires; another instance resumes it.
    await settleWithin(this.inFlight, SHUTDOWN_WAIT_MS);
  }

  /** Claims due runs while there are free workers. */
  async poll(): Promise<void> {
    if (this.polling || this.stopping) return;
    // After an outage, leases have run out while nobody could renew them: the instances driving
    // those runs renew them (a heartbeat, or a retried write) before anyone takes them over.
    if (!this.databaseHealth.settledFor(claimSettleMs(this.config.workflowLeaseMs))) return;
    this.polling = true;
    try {
      while (!this.stopping && this.inFlight.size < this.config.workflowWorkers) {
        const run = await this.runs.claimNext(this.instance, this.config.workflowLeaseMs);
        if (!run) break;
        const work = this.runner
          .resume(run)
          .catch((error: unknown) => this.runner.recordDriveFailure(run, error))
          .finally(() => {
            this.inFlight.delete(work);
            if (!this.stopping) void this.poll();
          });
        this.inFlight.add(work);
      }
    } catch (error) {
      // An unreachable database is one line (DatabaseHealth), not one per poll.
      if (isDatabaseUnavailable(error)) this.databaseHealth.unavailable(error);
      else this.logger.warn(`workflow queue poll failed: ${causeChain(error)}`);
    } finally {
      this.polling = false;
    }
  }
}

/**
 * How long after the database is back before runs are claimed again: one lease heartbeat and the
 * longest wait between retried writes of a run, plus a second. While the database was away no lease
 * could be renewed, so a run still being driven looks orphaned until its driver writes again.
 */
export function claimSettleMs(leaseMs: number): number {
  return heartbeatEveryMs(leaseMs) + LONGEST_WAIT_MS + 1000;
}
