import { finished, pipeline, Readable, Transform } from 'node:stream';
import { parse as parseCsv } from 'csv-parse';
import { AppError } from '../common/errors/app-error';
import type { ImportFormat } from './import-options';

/** What a file gives, in order: its header row (tabular files), then one item per data row. */
export type ImportItem =
  | { kind: 'header'; headers: string[] }
  | { kind: 'cells'; cells: unknown[] }
  | { kind: 'object'; value: unknown }
  | { kind: 'unreadable'; message: string };

export const unreadable = (format: string, reason: string) =>
  new AppError('IMPORT_FILE_UNREADABLE', { params: { format, reason }, details: { format, reason } });

/**
 * The rows of an uploaded file, read as it arrives (never held whole): CSV by csv-parse, a workbook's
 * first sheet by exceljs's streaming reader, NDJSON line by line; a JSON body (an array, parsed by
 * the JSON body parser within BODY_LIMIT) element by element. A file that cannot be read at all is a
 * 400 IMPORT_FILE_UNREADABLE; an NDJSON line that is not JSON is a refusal of that row only.
 */
export function readImport(format: ImportFormat, body: unknown, stallMs: number): AsyncGenerator<ImportItem> {
  if (format === 'json') return jsonItems(body);
  if (!(body instanceof Readable)) throw unreadable(format, 'no file was sent');
  if (format === 'csv') return csvItems(body);
  if (format === 'xlsx') return xlsxItems(body, stallMs);
  return ndjsonItems(body);
}

async function* jsonItems(body: unknown): AsyncGenerator<ImportItem> {
  if (!Array.isArray(body)) throw unreadable('json', 'the body must be a JSON array of objects');
  for (const value of body) yield { kind: 'object', value };
}

async function* csvItems(body: Readable): AsyncGenerator<ImportItem> {
  // bom: a spreadsheet's UTF-8 export starts with one; relax_column_count: a short row is absent cells.
  const parser = parseCsv({ bom: true, relax_column_count: true, skip_empty_lines: true });
  // pipeline: a body that errors or closes early fails the parser too (a pipe would leave it waiting).
  pipeline(body, utf8Text(), parser, () => undefined);
  let first = true;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (first) {
        first = false;
        yield { kind: 'header', headers: record };
      } else yield { kind: 'cells', cells: record };
    }
  } catch (error) {
    throw fileError('csv', error);
  }
}

async function* xlsxItems(body: Readable, stallMs: number): AsyncGenerator<ImportItem> {
  const uploaded = new UploadEnd(body);
  const { default: excel } = await import('exceljs');
  const reader = new excel.stream.xlsx.WorkbookReader(body, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'cache',
    entries: 'ignore',
  });
  let first = true;
  try {
    for await (const sheet of untilStalled(reader, uploaded, stallMs)) {
      for await (const row of untilStalled(sheet, uploaded, stallMs)) {
        // row.values is 1-based and sparse.
        const cells = (row.values as unknown[]).slice(1).map(xlsxCell);
        if (first) {
          first = false;
          yield { kind: 'header', headers: cells.map(headerText) };
        } else yield { kind: 'cells', cells };
      }
      // Only the first sheet holds records (the export writes one, `Data`).
      break;
    }
  } catch (error) {
    throw fileError('xlsx', error);
  }
}

const STALLED = Symbol('stalled');

/** Whether an upload has ended, telling one waiter at a time when it does. */
class UploadEnd {
  private ended = false;
  private waiter: (() => void) | null = null;

  constructor(body: Readable) {
    finished(body, () => {
      this.ended = true;
      this.waiter?.();
      this.waiter = null;
    });
  }

  /** Calls `then` once the upload has ended (at once if it has); gives what forgets the call. */
  whenEnded(then: () => void): () => void {
    if (this.ended) {
      then();
      return () => undefined;
    }
    this.waiter = then;
    return () => {
      if (this.waiter === then) this.waiter = null;
    };
  }
}

/**
 * `iterable`'s items, failing once the upload has ended and the next item has not come within
 * `stallMs`: exceljs's reader waits forever on a zip entry that ends early (a local header whose sizes
 * lie), though unzipper reported the error. Time the caller spends between items does not count.
 */
async function* untilStalled<T>(
  iterable: AsyncIterable<T>,
  upload: UploadEnd,
  stallMs: number,
): AsyncGenerator<T> {
  const iterator = iterable[Symbol.asyncIterator]();
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    let forget = () => undefined as void;
    const stalled = new Promise<typeof STALLED>((resolve) => {
      forget = upload.whenEnded(() => (timer = setTimeout(() => resolve(STALLED), stallMs)));
    });
    const next = await Promise.race([iterator.next(), stalled]).finally(() => {
      forget();
      clearTimeout(timer);
    });
    if (next === STALLED) throw new Error(`the file gave nothing for ${stallMs} ms after it was uploaded`);
    if (next.done) return;
    yield next.value;
  }
}

/** A header cell as text (a number or date in a header row is read as its text). */
function headerText(cell: unknown): string {
  if (cell === undefined || cell === null) return '';
  if (cell instanceof Date) return cell.toISOString();
  return typeof cell === 'string' ? cell : JSON.stringify(cell);
}

/** A workbook cell's value: rich text as its text, a formula as its result, a hyperlink as its text. */
function xlsxCell(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const cell = value as { richText?: { text: string }[]; result?: unknown; text?: unknown; error?: unknown };
  if (Array.isArray(cell.richText)) return cell.richText.map((part) => part.text).join('');
  if ('result' in cell) return xlsxCell(cell.result);
  if (typeof cell.text === 'string') return cell.text;
  return undefined;
}

/** A decoder that refuses bytes that are not UTF-8, where Node's would put U+FFFD in their place. */
const strictUtf8 = () => new TextDecoder('utf-8', { fatal: true });
const NOT_UTF8 = 'the file is not UTF-8 text';

/** The bytes passed on as they are once checked to be UTF-8; anything else fails the stream. */
function utf8Text(): Transform {
  const decoder = strictUtf8();
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      try {
        decoder.decode(chunk, { stream: true });
        done(null, chunk);
      } catch {
        done(new Error(NOT_UTF8));
      }
    },
    flush(done) {
      try {
        decoder.decode();
        done();
      } catch {
        done(new Error(NOT_UTF8));
      }
    },
  });
}

async function* ndjsonItems(body: Readable): AsyncGenerator<ImportItem> {
  const decoder = strictUtf8();
  const decoded = (chunk?: Buffer) => {
    try {
      return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch {
      throw unreadable('ndjson', NOT_UTF8);
    }
  };
  let pending = '';
  const item = (line: string): ImportItem | null => {
    if (line.trim() === '') return null;
    try {
      return { kind: 'object', value: JSON.parse(line) as unknown };
    } catch (error) {
      return { kind: 'unreadable', message: (error as Error).message };
    }
  };
  try {
    for await (const chunk of body) {
      const lines = (pending + decoded(chunk as Buffer)).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const next = item(line);
        if (next) yield next;
      }
    }
  } catch (error) {
    throw fileError('ndjson', error);
  }
  const last = item(pending + decoded());
  if (last) yield last;
}

function fileError(format: string, error: unknown): Error {
  if (error instanceof AppError) return error;
  const code = (error as { code?: unknown }).code;
  // The client went away (or its connection broke) before the whole file arrived.
  if (
    code === 'ERR_STREAM_PREMATURE_CLOSE' ||
    code === 'ECONNRESET' ||
    (error as Error).message === 'aborted'
  )
    return new AppError('IMPORT_UPLOAD_INTERRUPTED');
  return unreadable(format, error instanceof Error ? error.message : String(error));
}
