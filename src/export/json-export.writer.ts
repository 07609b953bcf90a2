import { toRecordResponse } from '../data/record.mapper';
import type { ChunkWriter, ExportWriter } from './export-format';
import type { ListedRecordRow } from '../data/record.mapper';

/** The array of records, each as the API returns it (`_id`, system fields, `data`). */
export class JsonExportWriter implements ExportWriter<ListedRecordRow> {
  private count = 0;

  constructor(
    private readonly write: ChunkWriter,
    private readonly schemaOrder: readonly string[] = [],
  ) {}

  async writeBatch(rows: ListedRecordRow[]): Promise<boolean> {
    if (rows.length === 0) return true;
    let text = '';
    for (const row of rows) {
      text +=
        (this.count++ === 0 ? '[' : ',') +
        JSON.stringify(toRecordResponse(row, { schemaOrder: this.schemaOrder }));
    }
    return this.write(text);
  }

  async end(): Promise<void> {
    await this.write(this.count === 0 ? '[]' : ']');
  }
}
