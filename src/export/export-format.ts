import { dataKeyOrder, type ListedRecordRow } from '../data/record.mapper';

export const EXPORT_FORMATS = ['json', 'csv', 'excel', 'zip'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  excel: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  zip: 'application/zip',
};
export const EXTENSIONS: Record<ExportFormat, string> = {
  json: 'json',
  csv: 'csv',
  excel: 'xlsx',
  zip: 'zip',
};

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
  configVersion: string;
}

/**
 * How the cells of CSV and XLSX are laid out and written: `raw` (EXPORT_RAW_CELLS) leaves text a
 * spreadsheet would evaluate as it is, by default it is neutralised (`formulaSafe`);
 * `configVersionColumn` (`?configVersionColumn=true`) adds the form version each record was last
 * validated against after `createdAt`. It is asked for, never there by default: the spec's CSV header
 * is `id`, `createdAt`, then the field names.
 */
export interface CellOptions {
  raw: boolean;
  configVersionColumn: boolean;
}

/** The system columns of CSV and XLSX, before the field columns, by name (CSV headers). */
export function systemColumns(options: CellOptions): readonly string[] {
  return options.configVersionColumn ? ['id', 'createdAt', 'configVersion'] : ['id', 'createdAt'];
}

/**
 * Text with a leading `'` when a spreadsheet would read it as a formula: OWASP's CSV-injection rule,
 * for a first character `=`, `+`, `-`, `@`, tab or carriage return. Only the first character is
 * looked at, so the cost per cell is one comparison chain. Callers pass strings only: a JSON number
 * (-5) is a number, not a formula, and stays as it is.
 */
export function formulaSafe(text: string): string {
  const first = text.charCodeAt(0);
  return first === 0x3d ||
    first === 0x2b ||
    first === 0x2d ||
    first === 0x40 ||
    first === 0x09 ||
    first === 0x0d
    ? `'${text}`
    : text;
}

/** The cell text of a field value in CSV: `cellText`, and a string made formula-safe unless raw. */
export function csvValueText(value: unknown, options: CellOptions): string {
  return typeof value === 'string' && !options.raw ? formulaSafe(value) : cellText(value);
}

/**
 * Headers of the field columns. A submitted field named like a system column (its name, or its
 * header in this export, such as the XLSX label `ID`; case-insensitively) would shadow that column
 * for a reader that keys cells by header, so it is headed `data.<name>` (again while that, too, is
 * taken). Then field names get the formula rule like values: they are keys a submission chose.
 */
export function fieldHeaders(
  columns: readonly string[],
  systemHeaders: readonly string[],
  options: CellOptions,
): string[] {
  const reserved = new Set(
    [...systemColumns(options), ...systemHeaders].map((header) => header.toLowerCase()),
  );
  const taken = new Set([...reserved, ...columns.map((column) => column.toLowerCase())]);
  return columns.map((column) => {
    let header = column;
    if (reserved.has(column.toLowerCase())) {
      do header = `data.${header}`;
      while (taken.has(header.toLowerCase()));
      taken.add(header.toLowerCase());
    }
    return options.raw ? header : formulaSafe(header);
  });
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
