import { Inject, Injectable } from '@nestjs/common';
import { and, eq } from 'drizzle-orm';
import { isUuid } from '../common/validation/is-uuid';
import { DATABASE, type Database } from '../database/database.types';
import { rowsOf } from '../database/raw-rows';
import { dataRecords } from '../database/schema';
import { draftInsertStatement, submitStatement, trashDraftsStatement } from './draft-statements';
import type { ListedRecordRow, RecordRow } from './record.mapper';
import { scopeCondition, type RecordScope } from './record-selection';
import {
  activeRecordIds,
  firstRecord,
  lockSaveLimit,
  type AlongsideWrite,
  type ChangeAuthor,
  type NewRecord,
  type RecordWrite,
} from './record-statements';

/** What a submit decided on the locked draft: its check's outcome, or 'stale' (If-Match). */
export type SubmitDecision = Omit<RecordWrite, 'data'> | 'stale';

/** The writes of drafts (README "Drafts") to data_records; reads and other changes are RecordsRepository's. */
@Injectable()
export class RecordDraftsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** Inserts a draft with its entry; no save limit (drafts count against none). */
  async insert(
    record: NewRecord,
    author: ChangeAuthor,
    alongside: AlongsideWrite | null,
  ): Promise<ListedRecordRow> {
    return this.db.transaction(async (tx) => {
      const inserted = await firstRecord(tx, draftInsertStatement(record, author));
      if (!inserted) throw new Error('a draft insert returned no row');
      await alongside?.(tx, inserted);
      return inserted;
    });
  }

  /**
   * Submits a record of the scope under its row lock: `decide` checks exactly the locked version (it
   * may throw: not a draft, hidden, refused by validation) and, when it passes, the owner's
   * submitted records are counted under the save-limit lock a create takes, so two submits (or a
   * submit and a create) at the limit cannot both pass. Null when there is no such active record.
   */
  submitLocked(
    id: string,
    scope: RecordScope,
    decide: (row: RecordRow) => SubmitDecision,
    saveLimit: number | null,
    author: ChangeAuthor,
  ): Promise<
    | { submitted: ListedRecordRow }
    | { stale: RecordRow }
    | { limitReached: true; existingId: string | null }
    | null
  > {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .select()
        .from(dataRecords)
        .where(and(eq(dataRecords.id, id), scopeCondition({ ...scope, ownerId: null, status: 'any' })))
        .limit(1)
        .for('update');
      if (!row) return null;
      const decision = decide(row);
      if (decision === 'stale') return { stale: row };
      if (saveLimit !== null && row.userId) {
        await lockSaveLimit(tx, row.configId, row.userId);
        const owner = { configId: row.configId, userId: row.userId, siteId: row.siteId };
        const existing = await activeRecordIds(tx, owner, saveLimit);
        if (existing.length >= saveLimit)
          return { limitReached: true as const, existingId: existing[0] ?? null };
      }
      const submitted = await firstRecord(tx, submitStatement(row, decision, author));
      if (!submitted) throw new Error('a draft locked for its submit was not updated');
      return { submitted };
    });
  }

  /**
   * Moves drafts not changed since `cutoff` to the trash, in batches; how many. Instances running it
   * at once each take other rows (SKIP LOCKED), and a second run finds nothing to do.
   */
  async trashUntouchedSince(cutoff: Date, author: ChangeAuthor, batchSize = 1000): Promise<number> {
    let moved = 0;
    for (;;) {
      const rows = rowsOf(await this.db.execute(trashDraftsStatement(cutoff, batchSize, author)));
      moved += rows.length;
      if (rows.length < batchSize) return moved;
    }
  }
}
