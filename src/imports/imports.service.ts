import { Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { keepRequest } from '../common/context/kept-request';
import { requireUser, type RequestContext } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import { csvCell } from '../common/text/csv-cell';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { RecordImports, type ImportTarget } from '../data/record-imports.service';
import type { ImportDto } from './dto/import.dto';
import { IMPORT_INSTANCE } from './import-instance';
import { REFUSALS_SHOWN, toImportResponse } from './import.mapper';
import { parseImportOptions, type ImportOptions } from './import-options';
import { ImportProcessor, type ImportRequest } from './import-processor';
import { ImportStager } from './import-stager';
import { ImportUpkeepRepository } from './import-upkeep.repository';
import { ImportsRepository, type ImportRow, type ImportStatus } from './imports.repository';

/** As long as the idempotency module keeps a key's answer. */
const KEY_LIFETIME_MS = 24 * 60 * 60_000;
const CSV_BATCH_ROWS = 1000;

export interface UploadRequest {
  contentType: string | undefined;
  query: Record<string, unknown>;
  body: unknown;
  idempotencyKey: string | undefined;
}

/**
 * Bulk imports (README "Bulk import"): an upload is read into staged rows while it arrives, then
 * its valid rows are stored in the background (ImportProcessor). An import is seen, and cancelled,
 * by its importer and by admins.
 */
@Injectable()
export class ImportsService {
  constructor(
    private readonly records: RecordImports,
    private readonly imports: ImportsRepository,
    private readonly upkeep: ImportUpkeepRepository,
    private readonly stager: ImportStager,
    private readonly processor: ImportProcessor,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Reads the file into a new import (404 for a form the caller cannot see, 403 without
   * `importResults`, 415/422 for the format and options, 400/413 for a file that cannot be read)
   * and answers it. The same Idempotency-Key again answers the first import of that key (24 h),
   * without reading the body.
   */
  async upload(ctx: RequestContext, configId: string, upload: UploadRequest): Promise<ImportDto> {
    const target = await this.records.target(ctx, configId);
    const options = parseImportOptions(upload.query, upload.contentType);
    const opened = await this.open(ctx, target, options, upload.idempotencyKey);
    if ('earlier' in opened) return this.response(opened.earlier);
    const row = opened.opened;
    // A continued import keeps its mode; the file sent again is read from after its last row read.
    const reading = { ...options, mode: row.mode as ImportOptions['mode'] };
    try {
      await this.stager.stage(ctx, target, row.id, reading, upload.body, row.rowsRead);
    } catch (error) {
      const now = await this.imports.findById(row.id);
      if (now?.status === 'cancelled') {
        await this.imports.dropValidRows(row.id);
        return this.response(now);
      }
      if (now && now.rowsStored > 0) {
        // Rows stored stay (valid-rows): the import fails, and the same key continues it.
        const code = error instanceof AppError ? error.code : 'IMPORT_UPLOAD_INTERRUPTED';
        await this.imports.finish(row.id, IMPORT_INSTANCE, 'failed', { code });
        throw error;
      }
      // Nothing of an unreadable file is kept: the import never was.
      await this.imports.delete(row.id);
      throw error;
    }
    return this.response(await this.afterUpload(row));
  }

  async get(ctx: RequestContext, id: string): Promise<ImportDto> {
    return this.response(await this.requireVisible(ctx, id));
  }

  /** Stops an unfinished import (rows stored so far stay, in `valid-rows`); 409 once it has finished. */
  async cancel(ctx: RequestContext, id: string): Promise<ImportDto> {
    const row = await this.requireVisible(ctx, id);
    const cancelled = await this.imports.cancel(row.id);
    if (!cancelled) throw new AppError('IMPORT_FINISHED', { params: { status: row.status } });
    await this.imports.dropValidRows(row.id);
    return this.response(cancelled);
  }

  /**
   * Erasure of an importer: the e-mail address their imports keep in their request (to store as
   * them after a take-over) is emptied; the imports and their counts stay. How many were changed.
   */
  eraseImporter(userId: string): Promise<number> {
    return this.upkeep.forgetImporterEmail(userId);
  }

  /** Every refusal as CSV (`row,field,rule,message`), read in batches while it is sent. */
  async refusalsCsv(ctx: RequestContext, id: string): Promise<Readable> {
    const row = await this.requireVisible(ctx, id);
    const imports = this.imports;
    async function* lines(): AsyncGenerator<string> {
      yield 'row,field,rule,message\n';
      let after = 0;
      for (;;) {
        const refusals = await imports.refusals(row.id, after, CSV_BATCH_ROWS);
        if (refusals.length === 0) return;
        let text = '';
        for (const refusal of refusals) {
          text += `${refusal.row},${[refusal.field, refusal.rule, refusal.message].map(csvCell).join(',')}\n`;
          after = refusal.row;
        }
        yield text;
      }
    }
    return Readable.from(lines());
  }

  private async open(
    ctx: RequestContext,
    target: ImportTarget,
    options: ImportOptions,
    key: string | undefined,
  ): Promise<{ opened: ImportRow } | { earlier: ImportRow }> {
    const user = requireUser(ctx);
    const request: ImportRequest = keepRequest(ctx, user);
    const row = {
      configId: target.configId,
      siteId: target.siteId,
      configVersion: target.configVersion,
      userId: user.userId,
      request: request as unknown as Record<string, unknown>,
      mode: options.mode,
      format: options.format,
      idempotencyKey: key ?? null,
    };
    for (;;) {
      const leaseMs = this.config.importLeaseMs;
      const opened = await this.imports.insert(row, IMPORT_INSTANCE, leaseMs);
      if (opened) return { opened };
      const earlier = await this.imports.findByKey(user.userId, target.configId, key!);
      if (!earlier) continue;
      // A failed one that stored rows goes on from where it stopped (no row is stored twice).
      const reopened = await this.imports.reopen(earlier.id, IMPORT_INSTANCE, leaseMs, KEY_LIFETIME_MS);
      if (reopened) return { opened: reopened };
      // Another failed or an expired one frees its key: this upload is a new import.
      if (!(await this.imports.releaseKey(earlier.id, KEY_LIFETIME_MS))) return { earlier };
    }
  }

  /** The upload is staged: what becomes of the import now. */
  private async afterUpload(row: ImportRow): Promise<ImportRow> {
    const staged = (await this.imports.findById(row.id))!;
    const valid = staged.rowsRead - staged.rowsRefused;
    // valid-rows stored its rows while they were read.
    const status: ImportStatus =
      row.mode === 'validate' || row.mode === 'valid-rows' || valid === 0
        ? 'done'
        : row.mode === 'all-or-nothing' && staged.rowsRefused > 0
          ? 'refused'
          : 'storing';
    const next = await this.imports.uploaded(row.id, IMPORT_INSTANCE, status, this.config.importLeaseMs);
    if (!next) return (await this.imports.findById(row.id)) ?? staged;
    if (status === 'storing') void this.processor.start(next);
    else await this.imports.dropValidRows(row.id);
    return next;
  }

  /** The importer's own imports, or any as an admin; anyone else's is a 404. */
  private async requireVisible(ctx: RequestContext, id: string): Promise<ImportRow> {
    const user = requireUser(ctx);
    const row = await this.imports.findById(id);
    if (!row || (row.userId !== user.userId && user.role !== 'admin')) throw new AppError('IMPORT_NOT_FOUND');
    return row;
  }

  private async response(row: ImportRow): Promise<ImportDto> {
    return toImportResponse(row, await this.imports.refusals(row.id, 0, REFUSALS_SHOWN + 1));
  }
}
