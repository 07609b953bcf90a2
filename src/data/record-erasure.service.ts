import { Injectable } from '@nestjs/common';
import { RecordHistoryRepository } from './history/record-history.repository';
import { RecordsRepository } from './records.repository';

/**
 * What an erasure (the erasure module, admin-checked there) asks of records: which records are a
 * person's, purging them past the trash, and dropping the values from their history entries (the
 * entries stay). Each call is safe to repeat: a second one finds nothing left to do.
 */
@Injectable()
export class RecordErasure {
  constructor(
    private readonly records: RecordsRepository,
    private readonly history: RecordHistoryRepository,
  ) {}

  /** Every record the user owns, active or in the trash, in any form and site. */
  idsOfUser(userId: string): Promise<string[]> {
    return this.records.idsOwnedBy(userId);
  }

  /** A form's records, active or in the trash, whose field at `path` (parseFieldPath's segments) holds `value`. */
  idsWithFieldValue(configId: string, path: string[], value: string | number | boolean): Promise<string[]> {
    return this.records.idsWithFieldValue(configId, path, value);
  }

  /** Purges the records for good (no trash, no event, no history entry of the purge); how many went. */
  eraseRecords(recordIds: string[]): Promise<number> {
    return this.records.purgeErased(recordIds);
  }

  /** Drops the values of the records' history entries, which stay marked erased; how many entries. */
  eraseHistoryOf(recordIds: string[]): Promise<number> {
    return this.history.eraseValuesOf(recordIds);
  }
}
