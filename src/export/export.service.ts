import { PassThrough, pipeline, type Readable } from 'node:stream';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { AttachmentsService } from '../attachments/attachments.service';
import type { RequestContext } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import { lastValue } from '../common/http/query-value';
import { Translator } from '../common/i18n/translator.service';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { parseFieldPath } from '../common/validation/field-path';
import { schemaOrderOf, type RecordValues } from '../data/record.mapper';
import { VisibleRecords } from '../data/visible-records.service';
import { csvAroundRows, CsvExportWriter } from './csv-export.writer';
import {
  attachmentHeader,
  columnsOfFirstRecord,
  CONTENT_TYPES,
  type CellOptions,
  EXPORT_FORMATS,
  EXTENSIONS,
  type ExportFormat,
  type ExportWriter,
} from './export-format';
import { JsonExportWriter } from './json-export.writer';
import { XlsxExportWriter } from './xlsx-export.writer';
import { zipExport } from './zip-export';
import { drainOrClose } from './drain-or-close';
import type { OnRecordBatch } from '../data/record-cursor.repository';

export interface ExportDownload {
  stream: Readable;
  contentType: string;
  disposition: string;
}

@Injectable()
export class ExportService {
  private readonly logger = new Logger(ExportService.name);
  private readonly rawCells: boolean;

  constructor(
    private readonly records: VisibleRecords,
    private readonly translator: Translator,
    private readonly attachments: AttachmentsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.rawCells = config.exportRawCells;
  }

  /**
   * Validates everything before the first byte is sent (so errors are still proper 4xx bodies), then
   * streams the records: CSV on PostgreSQL as the rows the database writes with COPY, everything else
   * from batches of records through the format writer.
   */
  async export(
    ctx: RequestContext,
    configId: string,
    query: Record<string, unknown>,
  ): Promise<ExportDownload> {
    // Access first (404/403), as through the route; then the query's own 422/400s.
    const visible = await this.records.select(ctx, configId, 'exportResults', undefined, query);
    const format = parseFormat(lastValue(query.format));
    const columns = parseColumns(query.columns);
    const cells: CellOptions = {
      raw: this.rawCells,
      configVersionColumn: parseConfigVersionColumn(query.configVersionColumn),
    };
    const selection = { ...visible, filters: this.records.parseFilters(query) };
    const { config } = selection;
    const schemaOrder = schemaOrderOf(config.schema);
    // Attachment fields show their files' names and URLs in CSV and XLSX cells (README "Attachments").
    const attachmentCells = this.attachments.exportCells<RecordValues>(config);
    const download = (stream: Readable): ExportDownload => ({
      stream,
      contentType: CONTENT_TYPES[format],
      disposition: attachmentHeader(config.title, EXTENSIONS[format]),
    });

    if (format === 'zip') {
      const onError = (error: Error) => this.logger.error(`export of ${configId} failed: ${error.message}`);
      const batches = (onBatch: OnRecordBatch) => this.records.forEachBatch(selection, onBatch);
      return download(zipExport(batches, this.attachments, schemaOrder, onError));
    }
    if (format === 'csv' && !attachmentCells) {
      const copied = await this.records.csvRows(
        selection,
        columns ?? ((first) => columnsOfFirstRecord(first, schemaOrder)),
        { formulaSafe: !cells.raw, configVersion: cells.configVersionColumn },
      );
      if (copied) return download(this.csvOfRows(configId, copied.columns, copied.rows, cells));
    }

    const stream = new PassThrough();
    const write = async (chunk: string | Buffer): Promise<boolean> => {
      if (stream.destroyed) return false;
      if (!stream.write(chunk)) await drainOrClose(stream);
      return !stream.destroyed;
    };
    let reading: Promise<void>;
    if (format === 'json') {
      const writer = new JsonExportWriter(write, schemaOrder);
      reading = this.records
        .forEachBatch(selection, (rows) => writer.writeBatch(rows))
        .then(() => writer.end());
    } else {
      const writer: ExportWriter<RecordValues> =
        format === 'csv'
          ? new CsvExportWriter(write, cells, columns, schemaOrder)
          : await XlsxExportWriter.open(
              write,
              {
                id: this.translator.translate('labels.id', ctx.locale),
                createdAt: this.translator.translate('labels.createdAt', ctx.locale),
                configVersion: this.translator.translate('labels.configVersion', ctx.locale),
              },
              cells,
              columns,
              schemaOrder,
            );
      // Cells need only the submitted values: less to read and parse than whole records.
      reading = this.records
        .forEachValuesBatch(selection, async (rows) =>
          writer.writeBatch(attachmentCells ? await attachmentCells(rows) : rows),
        )
        .then(() => writer.end());
    }

    void reading
      .then(() => stream.end())
      .catch((error: unknown) => {
        // Headers are gone already: cut the download so the client sees it incomplete, and log why.
        this.logger.error(`export of ${configId} failed: ${(error as Error).message}`);
        stream.destroy(error as Error);
      });

    return download(stream);
  }

  /** The header and the database's rows, joined as the spec's CSV, with the rows' backpressure. */
  private csvOfRows(configId: string, columns: string[], rows: Readable, cells: CellOptions): Readable {
    return pipeline(rows, csvAroundRows(columns, cells), (error) => {
      // A client that went away is not a failure; the rows stream has released its connection.
      if (error && error.code !== 'ERR_STREAM_PREMATURE_CLOSE') {
        this.logger.error(`export of ${configId} failed: ${error.message}`);
      }
    });
  }
}

function parseFormat(value: string | undefined): ExportFormat {
  const format = value ? value.toLowerCase() : 'json';
  const normalized = format === 'xlsx' ? 'excel' : format;
  if (!(EXPORT_FORMATS as readonly string[]).includes(normalized)) {
    throw new AppError('VALIDATION_FAILED', {
      validationErrors: [
        { field: 'format', rule: 'isIn', message: 'format must be json, csv, excel or zip' },
      ],
    });
  }
  return normalized as ExportFormat;
}

/** `configVersionColumn=true|false` (default false): the form version column in CSV and XLSX. */
function parseConfigVersionColumn(value: unknown): boolean {
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  throw new AppError('VALIDATION_FAILED', {
    validationErrors: [
      {
        field: 'configVersionColumn',
        rule: 'isBoolean',
        message: 'configVersionColumn must be true or false',
      },
    ],
  });
}

function parseColumns(value: unknown): string[] | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const columns = value.split(',').map((column) => column.trim());
  if (columns.length > 500 || columns.some((column) => parseFieldPath(column)?.length !== 1)) {
    throw new AppError('VALIDATION_FAILED', {
      validationErrors: [
        { field: 'columns', rule: 'fieldNames', message: 'columns must be comma-separated field names' },
      ],
    });
  }
  return columns;
}
