import { Transform } from 'node:stream';
import {
  columnsOfFirstRecord,
  csvValueText,
  fieldHeaders,
  systemColumns,
  type CellOptions,
  type ChunkWriter,
  type ExportWriter,
} from './export-format';
import type { RecordValues } from '../data/record.mapper';
import { csvCell } from '../common/text/csv-cell';

/**
 * The header row: `id,createdAt,<field columns>`, with `configVersion` after `createdAt` when asked
 * (see `fieldHeaders` for a field named `id`).
 */
function csvHeader(columns: readonly string[], options: CellOptions): string {
  const system = systemColumns(options);
  return [...system, ...fieldHeaders(columns, system, options)].map(csvCell).join(',');
}

const LINE_FEED = 0x0a;
const LINE_FEED_BUFFER = Buffer.from('\n');

/**
 * The spec's CSV around rows the database wrote, each ended by "\n" (COPY's output): the header goes
 * before the first row, and the last "\n" of each chunk is held back until more follows, since rows
 * are joined by "\n" with none after the last. No rows: no header either, an empty body.
 */
export function csvAroundRows(columns: readonly string[], options: CellOptions): Transform {
  let started = false;
  let heldLineFeed = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (chunk.length === 0) return callback();
      if (!started) {
        started = true;
        this.push(`${csvHeader(columns, options)}\n`);
      } else if (heldLineFeed) {
        this.push(LINE_FEED_BUFFER);
      }
      heldLineFeed = chunk[chunk.length - 1] === LINE_FEED;
      callback(null, heldLineFeed ? chunk.subarray(0, chunk.length - 1) : chunk);
    },
  });
}

/**
 * The spec's CSV: header `id,createdAt,<fields>` (`configVersion` after `createdAt` when asked) where the fields are the keys of the first record's
 * data (or the requested columns), one row per record, rows joined by "\n" (no trailing newline),
 * and an empty result is an empty body. Strings a spreadsheet would evaluate get a leading `'`
 * unless the cells are raw (`formulaSafe`).
 */
export class CsvExportWriter implements ExportWriter<RecordValues> {
  private columns: string[] | null;
  private started = false;

  constructor(
    private readonly write: ChunkWriter,
    private readonly options: CellOptions,
    columns?: string[],
    private readonly schemaOrder: string[] = [],
  ) {
    this.columns = columns && columns.length > 0 ? columns : null;
  }

  async writeBatch(rows: RecordValues[]): Promise<boolean> {
    if (rows.length === 0) return true;
    let text = '';
    if (!this.started) {
      this.columns ??= columnsOfFirstRecord(rows[0], this.schemaOrder);
      text = csvHeader(this.columns, this.options);
      this.started = true;
    }
    const columns = this.columns!;
    const options = this.options;
    for (const row of rows) {
      const cells = [
        row.id,
        row.createdAt.toISOString(),
        ...(options.configVersionColumn ? [String(row.configVersion)] : []),
        ...columns.map((column) => csvValueText(row.data?.[column], options)),
      ];
      text += `\n${cells.map(csvCell).join(',')}`;
    }
    return this.write(text);
  }

  async end(): Promise<void> {
    // Nothing pending: every row was written with its batch.
  }
}
