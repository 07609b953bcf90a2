import { pipeline, type Readable, Transform } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import type { RequestContext } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import { StreamedBody } from '../common/http/streamed-body';
import { Translator } from '../common/i18n/translator.service';
import { APP_CONFIG, SUPPORTED_LOCALES, type AppConfig } from '../config/app-config';
import { RecordImports, type ImportTarget } from '../data/record-imports.service';
import { planColumns, rowData, type CellRules, type ImportColumn } from './import-cells';
import { IMPORT_INSTANCE } from './import-instance';
import type { ColumnMapping, ImportOptions } from './import-options';
import { readImport, unreadable, type ImportItem } from './import-readers';
import { ImportsRepository, type StagedRow } from './imports.repository';

/**
 * Reads an upload as it arrives: each row mapped to fields, typed by the form's schema and checked
 * as a create checks a body, then written in batches. `valid-rows` stores each batch's valid rows
 * at once (records, history, events, the batch's refusals and counts in one statement), while the
 * next batch is read and checked; `all-or-nothing` stages every row (valid rows with their
 * computed values, refused ones with their refusals) for one statement to store them once the
 * file is known to be clean; `validate` keeps the refusals only. The database holds what was read,
 * so storing survives a crash of this instance.
 */
@Injectable()
export class ImportStager {
  private readonly systemHeaders: ReadonlySet<string>;
  private readonly cells: CellRules;

  constructor(
    private readonly records: RecordImports,
    private readonly imports: ImportsRepository,
    private readonly translator: Translator,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    // The export's system columns: by name in CSV, by their localized labels in a workbook.
    const labels = SUPPORTED_LOCALES.flatMap((locale) => [
      translator.translate('labels.id', locale),
      translator.translate('labels.createdAt', locale),
      translator.translate('labels.configVersion', locale),
    ]);
    this.systemHeaders = new Set(
      ['id', '_id', 'createdat', 'configversion', ...labels].map((label) => label.toLowerCase()),
    );
    this.cells = { unneutralise: !config.exportRawCells };
  }

  /**
   * Reads the whole file, from after row `resumeAfter` (the rows an interrupted upload of the same
   * import read already); throws (4xx) when it cannot be read.
   */
  async stage(
    ctx: RequestContext,
    target: ImportTarget,
    importId: string,
    options: ImportOptions,
    body: unknown,
    resumeAfter = 0,
  ): Promise<void> {
    const input = body instanceof StreamedBody ? limited(body.stream, this.config.importMaxBytes) : body;
    let columns: ImportColumn[] | null = null;
    let rowNumber = 0;
    let batch: StagedRow[] = [];
    // One batch is written while the next is read and checked: at most two batches in memory.
    let writing: Promise<void> = Promise.resolve();
    const write = async (rows: StagedRow[]) => {
      const written = await this.write(ctx, target, importId, options, rows);
      // Cancelled meanwhile (or taken for abandoned): the rest of the file is not wanted.
      if (!written) throw new AppError('IMPORT_FINISHED', { params: { status: 'cancelled' } });
    };
    const flush = async () => {
      if (batch.length === 0) return;
      const rows = batch;
      batch = [];
      await writing;
      writing = write(rows);
      // Its failure is seen at the next flush or at the end; the loop may stop before either.
      writing.catch(() => undefined);
    };
    try {
      for await (const item of readImport(options.format, input)) {
        if (item.kind === 'header') {
          const plan = planColumns(
            item.headers,
            target.config.schema,
            options.mapping,
            this.systemHeaders,
            this.cells,
          );
          if (plan.duplicate !== null)
            throw unreadable(options.format, `two columns give the field ${plan.duplicate}`);
          columns = plan.columns;
          continue;
        }
        rowNumber++;
        if (rowNumber <= resumeAfter) continue;
        const data = this.dataOf(ctx, item, columns, options.mapping);
        batch.push(this.checked(ctx, target, rowNumber, data));
        if (batch.length >= this.config.importBatchRows) await flush();
      }
    } catch (error) {
      // The batch in flight settles first: what the import holds is known when this is thrown.
      await writing.catch(() => undefined);
      throw error;
    }
    await flush();
    await writing;
  }

  /** One batch written as the mode wants it (see the class); false when the import is no longer held. */
  private async write(
    ctx: RequestContext,
    target: ImportTarget,
    importId: string,
    options: ImportOptions,
    rows: StagedRow[],
  ): Promise<boolean> {
    const leaseMs = this.config.importLeaseMs;
    const refused = rows.filter((row) => row.refusals !== null);
    if (options.mode === 'all-or-nothing' || refused.length === rows.length)
      return this.imports.stage(importId, IMPORT_INSTANCE, leaseMs, rows, rows.length);
    if (options.mode === 'validate')
      return this.imports.stage(importId, IMPORT_INSTANCE, leaseMs, refused, rows.length);
    const valid = rows.filter((row) => row.data !== null);
    // The records' history names the import, as when a taken-over import stores them.
    const origin = { kind: 'import' as const, importId };
    const inserted = await this.records.store(
      { ...ctx, origin },
      target,
      this.imports.batchRows(importId, IMPORT_INSTANCE, valid),
      this.imports.countBatch(importId, IMPORT_INSTANCE, leaseMs, rows.length, refused.length),
      refused.length > 0 ? [this.imports.batchRefusals(importId, IMPORT_INSTANCE, refused)] : [],
    );
    // The batch's rows are all stored, or none (the import was not held by this instance).
    return inserted === valid.length;
  }

  private checked(
    ctx: RequestContext,
    target: ImportTarget,
    rowNumber: number,
    data: Record<string, unknown> | RowRefusal,
  ): StagedRow {
    if (data instanceof RowRefusal)
      return { rowNumber, data: null, computedResults: null, refusals: [data.refusal] };
    const check = this.records.check(ctx, target.config, data);
    return check.valid
      ? { rowNumber, data, computedResults: check.computedResults, refusals: null }
      : { rowNumber, data: null, computedResults: null, refusals: check.refusals };
  }

  /** A row's data, or why the row has none (a line that is not JSON, a value that is no object). */
  private dataOf(
    ctx: RequestContext,
    item: Exclude<ImportItem, { kind: 'header' }>,
    columns: ImportColumn[] | null,
    mapping: ColumnMapping | null,
  ): Record<string, unknown> | RowRefusal {
    if (item.kind === 'cells') return rowData(item.cells, columns ?? [], this.cells);
    if (item.kind === 'unreadable')
      return new RowRefusal({
        field: '$row',
        rule: 'json',
        message: this.translator.translate('data.importRowNotJson', ctx.locale, { reason: item.message }),
      });
    const value = exportedData(item.value);
    if (value === null)
      return new RowRefusal({
        field: '$row',
        rule: 'isObject',
        message: this.translator.translate('data.importRowNotObject', ctx.locale),
      });
    return mapping ? renamed(value, mapping) : value;
  }
}

/** A row refused before validation (it has no data to check). */
class RowRefusal {
  constructor(readonly refusal: { field: string; rule: string; message: string }) {}
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A JSON row: a record as the export writes it (`{_id, data, ...}`: its data), or the data itself. */
function exportedData(value: unknown): Record<string, unknown> | null {
  if (!isPlainObject(value)) return null;
  if (Object.hasOwn(value, '_id') && isPlainObject(value.data)) return value.data;
  return value;
}

function renamed(data: Record<string, unknown>, mapping: ColumnMapping): Record<string, unknown> {
  const entries: [string, unknown][] = [];
  for (const [key, value] of Object.entries(data)) {
    const field = Object.hasOwn(mapping, key) ? mapping[key] : key;
    if (field !== null) entries.push([field, value]);
  }
  return Object.fromEntries(entries);
}

/** The body, failing with 413 IMPORT_FILE_TOO_LARGE past `maxBytes`. */
function limited(body: Readable, maxBytes: number): Readable {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > maxBytes)
        return callback(
          new AppError('IMPORT_FILE_TOO_LARGE', {
            params: { limit: maxBytes },
            details: { limit: maxBytes },
          }),
        );
      callback(null, chunk);
    },
  });
  // The error of either side ends both; the reader sees it on `counter`.
  pipeline(body, counter, () => undefined);
  return counter;
}
