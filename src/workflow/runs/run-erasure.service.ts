import { Injectable } from '@nestjs/common';
import { WorkflowEffectsRepository } from '../effects/workflow-effects.repository';
import { RunHistoryRepository } from './run-history.repository';

/**
 * What an erasure (the erasure module, admin-checked there) asks of workflow runs: which runs hold
 * a person's data, scrubbing them (input, results, step logs; the runs stay, marked erased), and
 * dropping their outbox mail. Each call is safe to repeat.
 */
@Injectable()
export class RunErasure {
  constructor(
    private readonly runs: RunHistoryRepository,
    private readonly effects: WorkflowEffectsRepository,
  ) {}

  /** Runs started by the user, or about one of the records. */
  async idsOfUser(userId: string, recordIds: string[]): Promise<string[]> {
    const [own, onRecords] = await Promise.all([
      this.runs.idsNotErasedOfUser(userId),
      this.runs.idsNotErasedOfRecords(recordIds),
    ]);
    return [...new Set([...own, ...onRecords])];
  }

  /** Runs about one of the records, or of the form with `value` in the input at `path` (segments). */
  async idsWithFieldValue(
    configId: string,
    path: string[],
    value: string | number | boolean,
    recordIds: string[],
  ): Promise<string[]> {
    const [withValue, onRecords] = await Promise.all([
      this.runs.idsNotErasedWithInputValue(configId, path, value),
      this.runs.idsNotErasedOfRecords(recordIds),
    ]);
    return [...new Set([...withValue, ...onRecords])];
  }

  /**
   * Scrubs the runs, then deletes their effects (pending mail dropped, sent mail's copy gone). In
   * this order: a scrubbed run has lost its lease, so no final write of it can add effects after.
   */
  async eraseRuns(runIds: string[]): Promise<{ runs: number; runEffects: number }> {
    const runs = await this.runs.eraseRuns(runIds);
    const runEffects = await this.effects.deleteOfRuns(runIds);
    return { runs, runEffects };
  }

  /** Drops the outbox mail not sent yet to this address. */
  dropPendingMailTo(email: string): Promise<number> {
    return this.effects.dropPendingMailTo(email);
  }
}
