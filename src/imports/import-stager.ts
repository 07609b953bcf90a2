import { pipeline, type Readable, Transform } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import type { RequestContext } from '../common/context/request-context';
import { AppError, type FieldError } from '../common/errors/app-error';
import { bodyShapeProblem, storableText } from '../common/http/body-guard';
import { StreamedBody } from '../common/http/streamed-body';
import { Translator } from '../common/i18n/translator.service';
import { APP_CONFIG, SUPPORTED_LOCALES, type AppConfig } from '../config/app-config';
import { RecordImports, type ImportTarget, type InsertOrder } from '../data/record-imports.service';
import { planColumns, rowData, type CellRules, type ImportColumn } from './import-cells';
import { IMPORT_INSTANCE } from './import-instance';
import type { ColumnMapping, ImportOptions } from './import-options';
import { readImport, unreadable, type ImportItem } from './import-readers';
import { ImportsRepository, type StagedRow } from './imports.repository';

/**
 * Reads an upload as it arrives: each row mapped to fields, typed by the form's schema and checked
 * as a create checks a body, then written in batches. `valid-rows` stores each batch's valid rows
 * at once (records, history, events, the batch's refusals and counts in one transaction), two
 * batches at a time while the next is read and checked; `all-or-nothing` stages every row (valid
 * rows with their computed values, refused ones with their refusals) for one statement to store
 * them once the file is known to be clean; `validate` keeps the refusals only. The database holds
 * what was read, so storing survives a crash of this instance.
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
    // Two batches are stored at once (on two connections: the database's work on a batch is most
    // of an import's cost) while the next is read and checked: at most three batches in memory.
    // Each is counted, and committed, only after the one before it, so the rows counted as read
    // are always where a resumed upload goes on.
    let earlier: BatchWrite = WRITTEN;
    let latest: BatchWrite = WRITTEN;
    const flush = async () => {
      if (batch.length === 0) return;
      const rows = batch;
      batch = [];
      await earlier.done;
      earlier = latest;
      latest = this.writeAfter(earlier, ctx, target, importId, options, rows);
    };
    try {
      for await (const item of readImport(options.format, input, this.config.importStallMs)) {
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
      // The batches in flight settle first: what the import holds is known when this is thrown.
      await Promise.allSettled([earlier.done, latest.done]);
      throw error;
    }
    await flush();
    await earlier.done;
    await latest.done;
  }

  /** A batch written once `before` (the batch before it) lets it; throws when the import is no longer held. */
  private writeAfter(
    before: BatchWrite,
    ctx: RequestContext,
    target: ImportTarget,
    importId: string,
    options: ImportOptions,
    rows: StagedRow[],
  ): BatchWrite {
    let begun!: () => void;
    const started = new Promise<void>((resolve) => (begun = resolve));
    const order = { begins: before.started, begun, counts: before.done };
    const done = this.write(ctx, target, importId, options, rows, order).then((written) => {
      // Cancelled meanwhile (or taken for abandoned): the rest of the file is not wanted.
      if (!written) throw new AppError('IMPORT_FINISHED', { params: { status: 'cancelled' } });
    });
    // Its failure is seen at a later flush or at the end; the loop may stop before either. A batch
    // that failed before it began lets the next one begin (and fail on counting).
    done.catch(() => undefined).finally(begun);
    return { started, done };
  }

  /**
   * One batch written as the mode wants it (see the class), in its `order`; false (nothing written)
   * when the import is no longer held.
   */
  private async write(
    ctx: RequestContext,
    target: ImportTarget,
    importId: string,
    options: ImportOptions,
    rows: StagedRow[],
    order: InsertOrder,
  ): Promise<boolean> {
    const leaseMs = this.config.importLeaseMs;
    const after = rows[0].rowNumber - 1;
    const refused = rows.filter((row) => row.refusals !== null);
    if (options.mode !== 'valid-rows' || refused.length === rows.length) {
      // Staging is cheap: one statement, counting first, once the batch before it is written.
      await order.counts;
      order.begun();
      const kept = options.mode === 'validate' ? refused : rows;
      return this.imports.stage(importId, IMPORT_INSTANCE, leaseMs, kept, rows.length, after);
    }
    const valid = rows.filter((row) => row.data !== null);
    // The records' history names the import, as when a taken-over import stores them.
    const origin = { kind: 'import' as const, importId };
    const inserted = await this.records.store(
      { ...ctx, origin },
      target,
      this.imports.batchRows(importId, IMPORT_INSTANCE, valid),
      this.imports.countBatch(importId, IMPORT_INSTANCE, leaseMs, rows.length, refused.length, after),
      refused.length > 0 ? [this.imports.batchRefusals(importId, IMPORT_INSTANCE, refused)] : [],
      order,
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
    if (data instanceof RowRefusal) return refusedRow(rowNumber, data.refusal);
    // What the body guard refuses in a create (a NUL, a lone surrogate, too deep), refused per row:
    // a streamed file's rows never pass through the guard.
    const shape = bodyShapeProblem(data, this.config.bodyMaxDepth);
    if (shape) return refusedRow(rowNumber, this.shapeRefusal(ctx, shape));
    // No record larger than a create's whole body: a file's row is bound by nothing else.
    if (Buffer.byteLength(JSON.stringify(data)) > this.config.bodyLimit)
      return refusedRow(
        rowNumber,
        this.wholeRow(ctx, 'maxBytes', 'data.importRowTooLarge', { limit: this.config.bodyLimit }),
      );
    const check = this.records.check(ctx, target.config, data);
    return check.valid
      ? { rowNumber, data, computedResults: check.computedResults, refusals: null }
      : { rowNumber, data: null, computedResults: null, refusals: check.refusals };
  }

  /** A refusal of the row as a whole (field `$row`), its message translated. */
  private wholeRow(
    ctx: RequestContext,
    rule: string,
    messageKey: string,
    params?: Record<string, unknown>,
  ): FieldError {
    return { field: '$row', rule, message: this.translator.translate(messageKey, ctx.locale, params) };
  }

  private shapeRefusal(ctx: RequestContext, problem: AppError): FieldError {
    const fieldError = problem.validationErrors?.[0];
    // The field named may be the key at fault, which the database cannot store as it is either.
    if (fieldError)
      return { field: storableText(fieldError.field), rule: fieldError.rule, message: fieldError.message };
    return this.wholeRow(ctx, 'maxDepth', 'data.importRowTooDeep', { limit: this.config.bodyMaxDepth });
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
      return new RowRefusal(this.wholeRow(ctx, 'json', 'data.importRowNotJson', { reason: item.message }));
    const value = exportedData(item.value);
    if (value === null) return new RowRefusal(this.wholeRow(ctx, 'isObject', 'data.importRowNotObject'));
    return mapping ? renamed(value, mapping) : value;
  }
}

/** A batch being written: `started` once it holds its connection (or has ended), `done` when written. */
interface BatchWrite {
  started: Promise<void>;
  done: Promise<void>;
}

const WRITTEN: BatchWrite = { started: Promise.resolve(), done: Promise.resolve() };

/** A row refused before validation (it has no data to check). */
class RowRefusal {
  constructor(readonly refusal: FieldError) {}
}

const refusedRow = (rowNumber: number, refusal: FieldError): StagedRow => ({
  rowNumber,
  data: null,
  computedResults: null,
  refusals: [refusal],
});

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
