import { AppError } from '../common/errors/app-error';
import { lastValue } from '../common/http/query-value';

export const IMPORT_MODES = ['validate', 'all-or-nothing', 'valid-rows'] as const;
export type ImportMode = (typeof IMPORT_MODES)[number];
export const IMPORT_FORMATS = ['csv', 'xlsx', 'ndjson', 'json'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

export const XLSX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
/** The media types whose bodies the import route reads as a stream (import-body.ts). */
export const STREAMED_CONTENT_TYPES = ['text/csv', 'application/x-ndjson', XLSX_CONTENT_TYPE];

const FORMAT_OF_TYPE: Record<string, ImportFormat> = {
  'text/csv': 'csv',
  'application/x-ndjson': 'ndjson',
  [XLSX_CONTENT_TYPE]: 'xlsx',
  'application/json': 'json',
};

/** A column's header → the field it fills; null leaves the column out. */
export type ColumnMapping = Record<string, string | null>;

export interface ImportOptions {
  mode: ImportMode;
  format: ImportFormat;
  mapping: ColumnMapping | null;
}

const invalid = (field: string, rule: string, message: string) =>
  new AppError('VALIDATION_FAILED', { validationErrors: [{ field, rule, message }] });

/**
 * The import's options from the query (`mode`, `mapping` as a JSON object) and the body's media
 * type (the format). An unknown media type is a 415, a bad mode or mapping a 422.
 */
export function parseImportOptions(
  query: Record<string, unknown>,
  contentType: string | undefined,
): ImportOptions {
  const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const format = FORMAT_OF_TYPE[mediaType];
  if (!format) throw new AppError('UNSUPPORTED_MEDIA_TYPE');
  const mode = lastValue(query.mode) ?? 'valid-rows';
  if (!(IMPORT_MODES as readonly string[]).includes(mode))
    throw invalid('mode', 'isIn', `mode must be one of ${IMPORT_MODES.join(', ')}`);
  return { mode: mode as ImportMode, format, mapping: parseMapping(lastValue(query.mapping)) };
}

function parseMapping(value: string | undefined): ColumnMapping | null {
  if (value === undefined || value === '') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  const message = 'mapping must be a JSON object of column header → field name (or null to leave it out)';
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalid('mapping', 'isObject', message);
  for (const target of Object.values(parsed)) {
    if (target !== null && (typeof target !== 'string' || target.length === 0))
      throw invalid('mapping', 'isObject', message);
  }
  return parsed as ColumnMapping;
}
