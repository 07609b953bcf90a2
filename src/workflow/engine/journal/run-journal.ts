import { AppError } from '../../../common/errors/app-error';
import { isUniqueViolation } from '../../../database/unique-violation';
import type { Parametrized } from '../../../database/built-statement';
import type { CommittedEffect } from '../../effects/workflow-effects.repository';
import type { RunQueueRepository } from '../queue/run-queue.repository';
import type { RunJournalRepository } from './run-journal.repository';
import type { NewRun, RunFinish, RunProgress } from '../model/run-records';
import { CarriedWrite } from '../../../database/carried-write';
import type { WorkflowStepOptions } from '../../sdk/workflow-step.decorator';
import { redact } from '../model/redaction';
import type { AttemptOutcome } from '../driver/step-attempt';
import type { RunState } from '../model/run-state';
import { retryWhileUnavailable } from '../driver/transient-retry';

/** How often a run's driver renews its lease: three times per lease. */
export function heartbeatEveryMs(leaseMs: number): number {
  return Math.max(500, Math.floor(leaseMs / 3));
}

/** Every write a drive makes of its run, and the lease it holds on it. */
export interface RunJournal {
  /** The run's id; null for a dry run, which is never stored. */
  readonly runId: string | null;
  /**
   * Before a step with an effect: commits the progress where a crash needs it (or offers the run's
   * first write to a step that carries it) and answers whether cancellation was requested. `ahead`:
   * a later step that first write may mark in flight already (stepInFlightAhead), sparing that step
   * a write of its own; `callerRead`: an expression that write returns for that step (the caller's
   * account as its statement reads it: `callerReadFor`).
   */
  cancelledBeforeEffect(
    index: number,
    step: StepKind,
    ahead?: number | null,
    callerRead?: Parametrized | null,
  ): Promise<boolean>;
  /**
   * What the write that marked step `index` in flight ahead read with `callerRead`, while that
   * mark still holds (MARKED_AHEAD_FOR_MS, only pure steps since); undefined otherwise. Asked once.
   */
  callerReadFor(index: number): unknown;
  /** One attempt of the step, handed the run's first write to carry when one is offered (else null). */
  attempt<T extends AttemptOutcome>(work: (carried: CarriedWrite | null) => Promise<T>): Promise<T>;
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

/**
 * How long after the write that marked a step in flight ahead of time the step may still start
 * without a write of its own. Later (the steps between took longer than expected), it writes its
 * mark and reads the cancellation flag itself, so neither a cancel nor a crash can fall into a
 * longer window than this.
 */
export const MARKED_AHEAD_FOR_MS = 100;

/** What the journal needs to know of a step type. */
export type StepKind = Pick<WorkflowStepOptions, 'replayable' | 'carriesRunWrite'>;

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
  /**
   * The step the row marks in flight (null: none). A later write keeps the mark until the drive is
   * past that step (a resumed run reports it interrupted there), then clears or moves it.
   */
  private marked: number | null;
  /** When (performance.now()) this drive's last write marked a later step in flight, until the next step with an effect. */
  private markedAheadAt: number | null = null;
  /** The run's first write (and the progress it stores), offered to the next attempt of the step that carries it. */
  private offered: { write: CarriedWrite; progress: RunProgress; readFor: number | null } | null = null;
  /** What the write that marked step `step` ahead returned of the caller (see callerReadFor). */
  private callerRead: { step: number; answer: unknown } | null = null;
  /** The cancellation flag as the last write (or claim) read it, while no step has run since; else null. */
  private cancelFlag: boolean | null;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    readonly runId: string,
    private readonly runs: RunJournalRepository,
    private readonly queue: RunQueueRepository,
    private readonly state: RunState,
    private readonly settings: JournalSettings,
    stored: { unwritten: NewRun } | { stepInFlight: number | null; cancelRequested: boolean },
  ) {
    this.unwritten = 'unwritten' in stored ? stored.unwritten : null;
    this.marked = 'unwritten' in stored ? null : stored.stepInFlight;
    this.cancelFlag = 'unwritten' in stored ? false : stored.cancelRequested;
    this.heartbeat = setInterval(() => {
      if (this.unwritten) return;
      this.queue.extendLease(runId, settings.owner, settings.leaseMs).catch(() => undefined);
    }, heartbeatEveryMs(settings.leaseMs));
    this.heartbeat.unref();
  }

  close(): void {
    clearInterval(this.heartbeat);
  }

  stepRan(): void {
    this.cancelFlag = null;
  }

  async cancelledBeforeEffect(
    index: number,
    step: StepKind,
    ahead: number | null = null,
    callerRead: Parametrized | null = null,
  ): Promise<boolean> {
    const { replayable, carriesRunWrite } = step;
    const markedAheadAt = this.markedAheadAt;
    this.markedAheadAt = null;
    this.callerRead = null;
    if (!replayable && this.marked === index && markedAheadAt !== null) {
      // Marked in flight by the last write, with only pure steps since: a cancel that came in
      // between counts as one that came once the step started.
      if (performance.now() - markedAheadAt <= MARKED_AHEAD_FOR_MS) return false;
    }
    const inFlight = replayable ? this.keptMark(index) : index;
    if (this.unwritten && replayable && carriesRunWrite) {
      // Nobody can see (or cancel) a run not stored yet: it is stored with the step's insert, which
      // commits after the step's work, so a mark ahead covers only the pure steps after it.
      const { owner, leaseMs } = this.settings;
      const progress = this.progress(index, ahead ?? inFlight);
      const read = ahead !== null ? callerRead : null;
      const statement = this.runs.insertRunningWrite(this.unwritten, owner, progress, leaseMs, read);
      this.offered = { write: new CarriedWrite(statement), progress, readFor: read ? ahead : null };
      return false;
    }
    if (this.unwritten || !replayable || this.marked !== null) {
      await this.commit(index, inFlight);
    } else if (this.cancelFlag === null) {
      this.cancelFlag = await this.readCancelRequested();
    }
    return this.cancelFlag === true;
  }

  /**
   * The offered first write rides on the attempt's insert. Taken by an attempt that succeeded, it
   * committed with it. Otherwise the run is written now, as it would have been before the step:
   * not taken, nothing was stored; taken by a failed attempt, it may have committed (an answer lost),
   * so a stored run is tolerated and made current.
   */
  async attempt<T extends AttemptOutcome>(work: (carried: CarriedWrite | null) => Promise<T>): Promise<T> {
    const offered = this.offered;
    this.offered = null;
    if (!offered) return work(null);
    let outcome: T;
    try {
      outcome = await work(offered.write);
    } finally {
      offered.write.close();
    }
    if (offered.write.taken && 'outcome' in outcome) {
      this.written(offered.progress);
      const answer = offered.write.answer;
      if (offered.readFor !== null && answer !== undefined)
        this.callerRead = { step: offered.readFor, answer };
    } else await this.writeFirst(offered.progress, offered.write.taken);
    return outcome;
  }

  callerReadFor(index: number): unknown {
    const read = this.callerRead;
    this.callerRead = null;
    const markedAheadAt = this.markedAheadAt;
    if (!read || read.step !== index || this.marked !== index || markedAheadAt === null) return undefined;
    return performance.now() - markedAheadAt <= MARKED_AHEAD_FOR_MS ? read.answer : undefined;
  }

  readCancelRequested(): Promise<boolean> {
    return this.retried(() => this.runs.isCancelRequested(this.runId));
  }

  async requeue(nextStep: number, delayMs: number): Promise<void> {
    const progress = this.progress(nextStep, null);
    const kept = await this.retried(() =>
      this.queue.requeue(this.runId, this.settings.owner, progress, delayMs),
    );
    if (!kept) throw leaseLost();
    this.marked = null;
  }

  async pause(nextStep: number, until: number | null, effects: CommittedEffect[]): Promise<void> {
    // A pause is a step with an effect: the run was written before it (cancelledBeforeEffect).
    const progress = this.progress(nextStep, null);
    const at = until === null ? null : new Date(until);
    const kept = await this.retried(async (attempt) => {
      if (await this.runs.pause(this.runId, this.settings.owner, progress, at, effects)) return true;
      // A retry after a try whose commit was not acknowledged finds the run waiting as it wrote it.
      return attempt > 1 && (await this.runs.statusOf(this.runId)) === 'waiting';
    });
    if (!kept) throw leaseLost();
    this.marked = null;
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
      return attempt > 1 && (await this.runs.statusOf(this.runId)) === outcome.status;
    });
    if (!finished) throw leaseLost();
    this.marked = null;
  }

  /**
   * Commits the checkpoint (the step log, the scope, the next step and the step now in flight) and
   * reads the cancellation flag with it; the run's first write when it is not stored yet.
   */
  private async commit(nextStep: number, stepInFlight: number | null): Promise<void> {
    const progress = this.progress(nextStep, stepInFlight);
    const { owner, leaseMs } = this.settings;
    if (this.unwritten) {
      await this.writeFirst(progress, false);
      return;
    }
    const kept = await this.retried(() => this.runs.checkpoint(this.runId, owner, progress, leaseMs));
    if (!kept) throw leaseLost();
    this.cancelFlag = kept.cancelRequested;
    this.markWritten(progress);
  }

  /** What a write before step `index` of a replayable step keeps of the row's mark: a step still ahead. */
  private keptMark(index: number): number | null {
    return this.marked !== null && this.marked > index ? this.marked : null;
  }

  /** The row now marks what `progress` marks; a mark ahead of its next step holds until that step starts. */
  private markWritten(progress: RunProgress): void {
    this.marked = progress.stepInFlight;
    const ahead = progress.stepInFlight !== null && progress.stepInFlight > progress.nextStep;
    this.markedAheadAt = ahead ? performance.now() : null;
  }

  /**
   * The run's first write. A try after one whose answer was lost (or after a carried write that may
   * have committed: `maybeStored`) finds the run stored, and makes it current instead.
   */
  private async writeFirst(progress: RunProgress, maybeStored: boolean): Promise<void> {
    const { owner, leaseMs } = this.settings;
    const unwritten = this.unwritten!;
    await this.retried(async (attempt) => {
      try {
        await this.runs.insertRunning(unwritten, owner, progress, leaseMs);
      } catch (error) {
        if (!((attempt > 1 || maybeStored) && isUniqueViolation(error))) throw error;
        if (!(await this.runs.checkpoint(this.runId, owner, progress, leaseMs))) throw leaseLost();
      }
    });
    this.written(progress);
  }

  /** The run is stored now, with `progress` (nobody could cancel it before). */
  private written(progress: RunProgress): void {
    this.unwritten = null;
    this.cancelFlag = false;
    this.markWritten(progress);
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
  callerReadFor(): undefined {
    return undefined;
  }
  attempt<T extends AttemptOutcome>(work: (carried: null) => Promise<T>): Promise<T> {
    return work(null);
  }
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
