import { isoInstant } from '../database/iso-instant';
import { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { sql, type SQL } from 'drizzle-orm';
import { DatabaseClient } from '../database/database-client';
import type { ListedRecordRow } from './record.mapper';
import { selectionCondition, type RecordSelection } from './record-selection';

/** What the field columns are chosen from when none are requested: the first record. */
export type FirstRecord = Pick<ListedRecordRow, 'data' | 'dataKeys'>;

/** The field columns: requested ones, or chosen from the first record (oldest, then lowest id). */
export type CsvColumns = readonly string[] | ((first: FirstRecord) => string[]);

/**
 * `formulaSafe`: a string value whose first character a spreadsheet reads as the start of a formula
 * (`=`, `+`, `-`, `@`, tab, CR) gets a leading `'`, as `formulaSafe` in src/export/export-format.ts
 * does; numbers (-5) stay as they are.
 */
export interface CsvCellRule {
  formulaSafe: boolean;
  /** The form version after `createdAt` (asked for by the export's `configVersionColumn`). */
  configVersion: boolean;
}

/** Rows of CSV made by the database, and the field columns they hold. */
export interface CsvRows {
  columns: string[];
  /**
   * One row per record, oldest first, each ended by "\n": the id, `createdAt` in ISO 8601 with
   * milliseconds and `Z`, the configuration version when asked, then one cell per column, quoted when it holds a comma, double quote, CR or
   * LF. Empty when nothing matches. Read it to its end or destroy it: either returns the connection.
   */
  rows: Readable;
}

/**
 * A SELECT list holds at most 1,664 entries: wider exports (a record with thousands of keys) are
 * left to the batch reader.
 */
const MAX_COPY_COLUMNS = 1000;

/**
 * The records of a selection as CSV written by PostgreSQL itself (`COPY ... TO STDOUT`), which is
 * several times faster than formatting fetched rows in Node. Each cell is `fdws_csv_cell` (migration
 * 0005), the same text the batch writer makes in JavaScript.
 */
@Injectable()
export class RecordCsvRepository {
  constructor(private readonly database: DatabaseClient) {}

  /**
   * The CSV rows, or null where the batch writer has to do: on embedded PGlite (one connection, no
   * streamed COPY output) and beyond MAX_COPY_COLUMNS columns. The first record (for the columns,
   * unless they are given) and the rows are read in one snapshot, so the columns are those of the
   * first row written.
   */
  async copy(selection: RecordSelection, columns: CsvColumns, cells: CsvCellRule): Promise<CsvRows | null> {
    if (this.database.driver !== 'postgres') return null;
    const where = selectionCondition(selection);
    const reader = await this.database.openSnapshotReader();
    try {
      const [first] = (await reader.rows(
        // created_at is never null, so NULLS FIRST is the export's order; it lets PostgreSQL walk
        // the (config_id, created_at desc) index backwards instead of sorting every match.
        sql`select data, data_keys as "dataKeys" from data_records where ${where}
            order by created_at nulls first, id limit 1`,
      )) as FirstRecord[];
      if (!first) {
        await reader.close();
        return { columns: typeof columns === 'function' ? [] : [...columns], rows: Readable.from([]) };
      }
      const fields = typeof columns === 'function' ? columns(first) : [...columns];
      if (fields.length > MAX_COPY_COLUMNS) {
        await reader.close();
        return null;
      }
      return { columns: fields, rows: await reader.copyCsv(csvRowsQuery(where, fields, cells)) };
    } catch (error) {
      await reader.close(error as Error);
      throw error;
    }
  }
}

/**
 * The statement under COPY. Each field is read once, in the inner query (`data ->> field`); the
 * outer cell expression reads that text several times, which is why it is a column of a subquery
 * that is not merged into the outer one (OFFSET 0). Field names are bound values like any other.
 */
function csvRowsQuery(where: SQL, fields: string[], cells: CsvCellRule): SQL {
  const inner = [
    sql`data_records.id`,
    sql`data_records.created_at`,
    sql`data_records.config_version`,
    sql`data_records.data`,
    ...fields.map((field, index) => sql`data_records.data ->> ${field}::text as ${fieldText(index)}`),
  ];
  const outer = [
    sql`records.id`,
    isoInstant(sql`records.created_at`),
    ...(cells.configVersion ? [sql`records.config_version`] : []),
    ...fields.map((field, index) => {
      const text = sql`records.${fieldText(index)}`;
      const cell = sql`fdws_csv_cell(${text}, records.data, ${field}::text)`;
      if (!cells.formulaSafe) return cell;
      // The first character first (one comparison for nearly every cell); only then whether the
      // value is a string (a number's text starts with "-" too), whose text is then the cell itself.
      return sql`case when ascii(${text}) in (61, 43, 45, 64, 9, 13)
                       and jsonb_typeof(records.data -> ${field}::text) = 'string'
                  then '''' || ${text} else ${cell} end`;
    }),
  ];
  return sql`select ${sql.join(outer, sql`, `)}
    from (select ${sql.join(inner, sql`, `)} from data_records where ${where}
          order by data_records.created_at, data_records.id offset 0) as records
    order by records.created_at, records.id`;
}

/** The inner query's column holding the text of field number `index`. */
const fieldText = (index: number) => sql.raw(`field_${index}`);
