import { cellText, columnsOfFirstRecord, type ChunkWriter, type ExportWriter } from './export-format';
import type { ListedRecordRow } from '../data/record.mapper';

/** Quotes a cell containing a comma, double quote, CR or LF, doubling inner quotes. */
function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The spec's CSV: header `id,createdAt,<fields>` where the fields are the keys of the first record's
 * data (or the requested columns), one row per record, rows joined by "\n" (no trailing newline),
 * and an empty result is an empty body.
 */
export class CsvExportWriter implements ExportWriter {
  private columns: string[] | null;
  private started = false;

  constructor(
    private readonly write: ChunkWriter,
    columns?: string[],
    private readonly schemaOrder: string[] = [],
  ) {
    this.columns = columns && columns.length > 0 ? columns : null;
  }

  async writeBatch(rows: ListedRecordRow[]): Promise<boolean> {
    if (rows.length === 0) return true;
    let text = '';
    if (!this.started) {
      this.columns ??= columnsOfFirstRecord(rows[0], this.schemaOrder);
      text = ['id', 'createdAt', ...this.columns].map(csvCell).join(',');
      this.started = true;
    }
    const columns = this.columns!;
    for (const row of rows) {
      const cells = [
        row.id,
        row.createdAt.toISOString(),
        ...columns.map((column) => cellText(row.data?.[column])),
      ];
      text += `\n${cells.map(csvCell).join(',')}`;
    }
    return this.write(text);
  }

  async end(): Promise<void> {
    // Nothing pending: every row was written with its batch.
  }
}
