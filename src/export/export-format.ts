import { dataKeyOrder, type ListedRecordRow } from '../data/record.mapper';

export const EXPORT_FORMATS = ['json', 'csv', 'excel'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  excel: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};
export const EXTENSIONS: Record<ExportFormat, string> = { json: 'json', csv: 'csv', excel: 'xlsx' };

/** Writes formatted output; resolves false when the receiver has gone away. */
export type ChunkWriter = (chunk: string | Buffer) => Promise<boolean>;

/** A format writer: told each batch in order, then `end` once. */
export interface ExportWriter<Row> {
  writeBatch(rows: Row[]): Promise<boolean>;
  end(): Promise<void>;
}

export interface ExportLabels {
  id: string;
  createdAt: string;
}

/** Cell text of a field value: missing and null empty, objects and arrays as JSON. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value) ?? '';
}

/** `Content-Disposition` of a download named after the configuration. */
export function attachmentHeader(title: string, extension: string): string {
  const base =
    title
      // eslint-disable-next-line no-control-regex -- control characters must not reach a header
      .replace(/[\u0000-\u001f\u007f"\\/:*?<>|]+/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 100) || 'export';
  const ascii =
    base
      .normalize('NFKD')
      .replace(/[^\x20-\x7e]/g, '')
      .trim() || 'export';
  return `attachment; filename="${ascii}.${extension}"; filename*=UTF-8''${encodeURIComponent(`${base}.${extension}`)}`;
}

/**
 * The field columns when none are requested: the keys of the first record's data (spec), in the
 * order they were submitted (see `dataKeyOrder` for records stored before that order was kept).
 */
export function columnsOfFirstRecord(
  first: Pick<ListedRecordRow, 'data' | 'dataKeys'>,
  schemaOrder: readonly string[],
): string[] {
  return dataKeyOrder({ data: first.data ?? {}, dataKeys: first.dataKeys }, schemaOrder);
}
