import { AppError } from '../../common/errors/app-error';
import { isUniqueViolation } from '../../database/unique-violation';
import type { CommittedEffect } from '../effects/workflow-effects.repository';
import type { NewRun, RunFinish, RunProgress, WorkflowRunsRepository } from '../workflow-runs.repository';
import { redact } from './redaction';
import type { RunState } from './run-state';
import { retryWhileUnavailable } from './transient-retry';

/** How often a run's driver renews its lease: three times per lease. */
export function heartbeatEveryMs(leaseMs: number): number {
  return Math.max(500, Math.floor(leaseMs / 3));
}

/** Every write a drive makes of its run, and the lease it holds on it. */
export interface RunJournal {
  /** The run's id; null for a dry run, which is never stored. */
  readonly runId: string | null;
  /**
   * Before a step with an effect: commits the progress where a crash needs it and answers whether
   * cancellation was requested.
   */
  cancelledBeforeEffect(index: number, replayable: boolean): Promise<boolean>;
  /** A step ran: the cancellation flag last read is out of date. */
  stepRan(): void;
  readCancelRequested(): Promise<boolean>;
  /** Puts the run back in the queue for a retry after `delayMs` (asynchronous runs). */
  requeue(nextStep: number, delayMs: number): Promise<void>;
  /**
   * Stores the run `waiting` at step `nextStep` (no lease, no process) until a decision or `until`
   * (epoch ms; null: no deadline); the waiting step's own effects go into the outbox with it.
   */
  pause(nextStep: number, until: number | null, effects: CommittedEffect[]): Promise<void>;
  /** The run's final write; the held effects (`effects`) go into the outbox with it. */
  finish(outcome: RunFinish, logEntry: Record<string, unknown>, effects: CommittedEffect[]): Promise<void>;
  /** Stops the lease's heartbeat. */
  close(): void;
}

export interface JournalSettings {
  owner: string;
  leaseMs: number;
  /** How long a write is retried while the database is unreachable (WORKFLOW_DB_RETRY_MS). */
  dbRetryMs: number;
  secrets: ReadonlySet<string>;
}

/** The lease was lost (it expired and another instance took the run): this drive must stop. */
export function leaseLost(): AppError {
  return new AppError('WORKFLOW_LEASE_LOST');
}

/**
 * The journal of a stored run. Writes are made only where a crash needs them: a run driven inside
 * its request is written when its first step with an effect starts, or when it ends (before that a
 * crash loses nothing and nobody can see or cancel it); later, before a non-replayable step (its
 * in-flight marker lets a resumed run tell that it may have had its effect) or while the row still
 * marks an earlier step in flight. Every write checks the lease (`owner`) and renews it.
 */
export class DatabaseRunJournal implements RunJournal {
  /** The run as started in the request, until its first write. */
  private unwritten: NewRun | null;
  /** The row still marks a non-replayable step in flight; the next write clears or moves the marker. */
  private markedInFlight: boolean;
  /** The cancellation flag as the last write (or claim) read it, while no step has run since; else null. */
  private cancelFlag: boolean | null;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    readonly runId: string,
    private readonly runs: WorkflowRunsRepository,
    private readonly state: RunState,
    private readonly settings: JournalSettings,
    stored: { unwritten: NewRun } | { stepInFlight: number | null; cancelRequested: boolean },
  ) {
    this.unwritten = 'unwritten' in stored ? stored.unwritten : null;
    this.markedInFlight = 'unwritten' in stored ? false : stored.stepInFlight !== null;
    this.cancelFlag = 'unwritten' in stored ? false : stored.cancelRequested;
    this.heartbeat = setInterval(() => {
      if (this.unwritten) return;
      this.runs.extendLease(runId, settings.owner, settings.leaseMs).catch(() => undefined);
    }, heartbeatEveryMs(settings.leaseMs));
    this.heartbeat.unref();
  }

  close(): void {
    clearInterval(this.heartbeat);
  }

  stepRan(): void {
    this.cancelFlag = null;
  }

  async cancelledBeforeEffect(index: number, replayable: boolean): Promise<boolean> {
    if (this.unwritten || !replayable || this.markedInFlight) {
      await this.commit(index, replayable ? null : index);
    } else if (this.cancelFlag === null) {
      this.cancelFlag = await this.readCancelRequested();
    }
    return this.cancelFlag === true;
  }

  readCancelRequested(): Promise<boolean> {
    return this.retried(() => this.runs.isCancelRequested(this.runId));
  }

  async requeue(nextStep: number, delayMs: number): Promise<void> {
    const progress = this.progress(nextStep, null);
    const kept = await this.retried(() =>
      this.runs.requeue(this.runId, this.settings.owner, progress, delayMs),
    );
    if (!kept) throw leaseLost();
    this.markedInFlight = false;
  }

  async pause(nextStep: number, until: number | null, effects: CommittedEffect[]): Promise<void> {
    // A pause is a step with an effect: the run was written before it (cancelledBeforeEffect).
    const progress = this.progress(nextStep, null);
    const at = until === null ? null : new Date(until);
    const kept = await this.retried(async (attempt) => {
      if (await this.runs.pause(this.runId, this.settings.owner, progress, at, effects)) return true;
      // A retry after a try whose commit was not acknowledged finds the run waiting as it wrote it.
      return attempt > 1 && (await this.runs.findById(this.runId))?.status === 'waiting';
    });
    if (!kept) throw leaseLost();
    this.markedInFlight = false;
  }

  async finish(
    outcome: RunFinish,
    logEntry: Record<string, unknown>,
    effects: CommittedEffect[],
  ): Promise<void> {
    const unwritten = this.unwritten;
    if (unwritten) {
      await this.retried(async (attempt) => {
        try {
          await this.runs.insertFinished(unwritten, outcome, logEntry, effects);
        } catch (error) {
          // A retry after a try whose commit was not acknowledged: the run is stored already.
          if (!(attempt > 1 && isUniqueViolation(error))) throw error;
        }
      });
      this.unwritten = null;
      return;
    }
    const finished = await this.retried(async (attempt) => {
      if (await this.runs.finish(this.runId, this.settings.owner, outcome, logEntry, effects)) return true;
      // A retry after a try whose commit was not acknowledged finds the run finished as it wrote it.
      return attempt > 1 && (await this.runs.findById(this.runId))?.status === outcome.status;
    });
    if (!finished) throw leaseLost();
    this.markedInFlight = false;
  }

  /**
   * Commits the checkpoint (the step log, the scope, the next step and the step now in flight) and
   * reads the cancellation flag with it; the run's first write when it is not stored yet.
   */
  private async commit(nextStep: number, stepInFlight: number | null): Promise<void> {
    const progress = this.progress(nextStep, stepInFlight);
    const { owner, leaseMs } = this.settings;
    const unwritten = this.unwritten;
    if (unwritten) {
      await this.retried(async (attempt) => {
        try {
          await this.runs.insertRunning(unwritten, owner, progress, leaseMs);
        } catch (error) {
          if (!(attempt > 1 && isUniqueViolation(error))) throw error;
          // Stored by the try that lost its answer: this write makes it current.
          if (!(await this.runs.checkpoint(this.runId, owner, progress, leaseMs))) throw leaseLost();
        }
      });
      this.unwritten = null;
      this.cancelFlag = false;
    } else {
      const kept = await this.retried(() => this.runs.checkpoint(this.runId, owner, progress, leaseMs));
      if (!kept) throw leaseLost();
      this.cancelFlag = kept.cancelRequested;
    }
    this.markedInFlight = stepInFlight !== null;
  }

  private progress(nextStep: number, stepInFlight: number | null): RunProgress {
    return {
      nextStep,
      stepInFlight,
      checkpoint: { ...this.state.snapshot() },
      steps: redact(this.state.logs, this.settings.secrets),
      dataId: this.state.checkpoint.dataId,
    };
  }

  private retried<T>(write: (attempt: number) => Promise<T>): Promise<T> {
    return retryWhileUnavailable(this.settings.dbRetryMs, write);
  }
}

/** The journal of a dry run: nothing is stored, nothing is cancelled, no lease is held. */
export class DryRunJournal implements RunJournal {
  readonly runId = null;
  cancelledBeforeEffect(): Promise<boolean> {
    return Promise.resolve(false);
  }
  stepRan(): void {}
  readCancelRequested(): Promise<boolean> {
    return Promise.resolve(false);
  }
  requeue(): Promise<void> {
    return Promise.resolve();
  }
  pause(): Promise<void> {
    return Promise.resolve();
  }
  finish(): Promise<void> {
    return Promise.resolve();
  }
  close(): void {}
}
