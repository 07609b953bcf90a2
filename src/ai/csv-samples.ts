import type { FieldError } from '../common/errors/app-error';
import { isPrototypeName } from '../common/validation/field-path';

/** Limits of CSV samples (README): the text's size in UTF-8 bytes and its number of data rows. */
export const CSV_SAMPLE_LIMITS = { bytes: 256 * 1024, records: 1000 } as const;

export class CsvSampleError extends Error {
  constructor(readonly problem: FieldError) {
    super(problem.message);
  }
}

export interface CsvSamples {
  records: Record<string, unknown>[];
  /** 1-based line numbers (the header is row 1) whose extra cells were dropped. */
  rowsWithExtraCells: number[];
}

const DELIMITERS = [',', ';', '\t'] as const;
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * RFC 4180 rows: fields separated by `delimiter`, quoted fields may hold delimiters, line breaks and
 * doubled quotes; records end with CRLF, LF or CR. A quote inside an unquoted field is kept as text
 * (what spreadsheets write); an unterminated quoted field is an error.
 */
export function parseCsv(text: string, delimiter = ','): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let fieldStarted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const endField = () => {
    row.push(field);
    field = '';
    fieldStarted = false;
  };
  const endRow = () => {
    endField();
    rows.push(row);
    row = [];
  };
  for (; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char !== '"') field += char;
      else if (text[i + 1] === '"') {
        field += '"';
        i++;
      } else quoted = false;
    } else if (char === '"' && !fieldStarted) {
      quoted = true;
      fieldStarted = true;
    } else if (char === delimiter) endField();
    else if (char === '\r' || char === '\n') {
      if (char === '\r' && text[i + 1] === '\n') i++;
      endRow();
    } else {
      field += char;
      fieldStarted = true;
    }
  }
  if (quoted)
    throw new CsvSampleError({ field: 'samples', rule: 'csv', message: 'a quoted field is not closed' });
  if (fieldStarted || row.length > 0) endRow();
  return rows;
}

/** The delimiter of the header line (outside quotes): comma, semicolon or tab, whichever occurs most. */
export function detectDelimiter(text: string): string {
  const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === '\n' || char === '\r')) break;
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1);
  }
  let best = ',';
  for (const [delimiter, count] of counts) if (count > counts.get(best)!) best = delimiter;
  return best;
}

/** A cell as the JSON value a form would submit: numbers and booleans typed, empty cells absent. */
export function cellValue(cell: string): unknown {
  const text = cell.trim();
  if (text === '') return undefined;
  if (NUMBER.test(text) && Number.isFinite(Number(text))) return Number(text);
  if (/^(true|false)$/i.test(text)) return text.toLowerCase() === 'true';
  return cell;
}

/**
 * CSV text (header row first) as sample records. Headers with dots (`address.city`) become nested
 * objects; blank lines are skipped. Limits: `CSV_SAMPLE_LIMITS`.
 */
export function csvSamples(text: string): CsvSamples {
  if (Buffer.byteLength(text, 'utf8') > CSV_SAMPLE_LIMITS.bytes) {
    throw new CsvSampleError({
      field: 'samples',
      rule: 'maxBytes',
      message: `CSV samples must not exceed ${CSV_SAMPLE_LIMITS.bytes} bytes`,
    });
  }
  const rows = parseCsv(text, detectDelimiter(text)).filter((row) => row.some((cell) => cell.trim() !== ''));
  if (rows.length < 2) {
    throw new CsvSampleError({
      field: 'samples',
      rule: 'csv',
      message: 'CSV samples need a header row and at least one data row',
    });
  }
  if (rows.length - 1 > CSV_SAMPLE_LIMITS.records) {
    throw new CsvSampleError({
      field: 'samples',
      rule: 'maxRecords',
      message: `CSV samples must not have more than ${CSV_SAMPLE_LIMITS.records} data rows`,
    });
  }
  const header = rows[0].map((name, index) => name.trim() || `column${index + 1}`);
  const seen = new Set<string>();
  for (const name of header) {
    if (seen.has(name))
      throw new CsvSampleError({
        field: 'samples',
        rule: 'csv',
        message: `the header names "${name}" twice`,
      });
    seen.add(name);
  }
  // A JSON body cannot carry such keys either, and the draft's schema and rules are plain objects.
  const unusable = header.find((name) => name.split('.').some(isPrototypeName));
  if (unusable !== undefined)
    throw new CsvSampleError({
      field: 'samples',
      rule: 'csvHeader',
      message: `the header "${unusable.slice(0, 100)}" names a JavaScript object property (such as __proto__ or constructor), which cannot be a field name`,
    });
  const paths = header.map((name) => nestedPath(name, seen));
  const rowsWithExtraCells: number[] = [];
  const records = rows.slice(1).map((row, index) => {
    if (row.length > header.length) rowsWithExtraCells.push(index + 2);
    const record: Record<string, unknown> = {};
    paths.forEach((path, column) => {
      const value = cellValue(row[column] ?? '');
      if (value !== undefined) setPath(record, path, value);
    });
    return record;
  });
  return { records, rowsWithExtraCells };
}

/** `address.city` → ['address', 'city'] unless a segment is empty or also a column of its own. */
function nestedPath(name: string, columns: Set<string>): string[] {
  const segments = name.split('.');
  if (segments.length === 1 || segments.some((s) => s === '')) return [name];
  for (let end = 1; end < segments.length; end++) {
    if (columns.has(segments.slice(0, end).join('.'))) return [name];
  }
  return segments;
}

function setPath(record: Record<string, unknown>, path: string[], value: unknown): void {
  let target = record;
  for (const segment of path.slice(0, -1)) {
    const next = Object.hasOwn(target, segment) ? target[segment] : undefined;
    if (next === undefined) {
      const created: Record<string, unknown> = {};
      Object.defineProperty(target, segment, {
        value: created,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      target = created;
    } else target = next as Record<string, unknown>;
  }
  Object.defineProperty(target, path[path.length - 1], {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
