import { sql, type SQL } from 'drizzle-orm';
import type { AppConfig } from '../config/app-config';
import { AppError } from '../common/errors/app-error';

/** What one list answer may hold: records (and groups), and bytes of stored record documents. */
export interface ListBounds {
  maxRows: number;
  maxBytes: number;
}

export const listBoundsOf = (config: AppConfig): ListBounds => ({
  maxRows: config.listMaxRows,
  maxBytes: config.listMaxBytes,
});

/** A record's `data` and `computedResults` as JSON text, in bytes: what its answer grows by. */
const RECORD_BYTES = sql`(octet_length(data_records.data::text) + coalesce(octet_length(data_records.computed_results::text), 0))`;

/**
 * Select-list columns of a query over `data_records` in `order`: each row's bytes and the running
 * sum of bytes up to and including it. The sum is strictly increasing (every document has bytes),
 * so it also orders the rows.
 */
export function runningBytes(order: SQL): SQL {
  return sql`, ${RECORD_BYTES} as row_bytes, sum(${RECORD_BYTES}) over (order by ${order} rows between unbounded preceding and current row) as running_bytes`;
}

/**
 * The rows of `query` (which selects `runningBytes`) up to and including the first one that passes
 * `maxBytes`, in order. PostgreSQL stops sending there, so an answer that would be too large costs
 * the process at most `maxBytes` and one record before `assertWithinBytes` refuses it.
 */
export function withinBytes(query: SQL, maxBytes: number): SQL {
  return sql`select * from (${query}) as bounded where bounded.running_bytes - bounded.row_bytes < ${maxBytes}
      order by bounded.running_bytes`;
}

export function listTooLarge(bounds: ListBounds): AppError {
  return new AppError('LIST_TOO_LARGE', {
    params: { maxRows: bounds.maxRows, maxBytes: bounds.maxBytes },
    details: { maxRows: bounds.maxRows, maxBytes: bounds.maxBytes },
  });
}

/** True when `withinBytes` had to stop: its last row passes the byte bound. */
export function stoppedAtBytes(rows: Record<string, unknown>[], maxBytes: number): boolean {
  const last = rows[rows.length - 1];
  return last !== undefined && Number(last.running_bytes) > maxBytes;
}

/** 422 LIST_TOO_LARGE when `withinBytes` had to stop. */
export function assertWithinBytes(rows: Record<string, unknown>[], bounds: ListBounds): void {
  if (stoppedAtBytes(rows, bounds.maxBytes)) throw listTooLarge(bounds);
}

/** 422 LIST_TOO_LARGE when more than `maxRows` rows came back (a query limited to `maxRows + 1`). */
export function assertWithinRows(count: number, bounds: ListBounds): void {
  if (count > bounds.maxRows) throw listTooLarge(bounds);
}
