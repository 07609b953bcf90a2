import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { contextOfKept, type KeptRequest } from '../common/context/kept-request';
import { AppError } from '../common/errors/app-error';
import { LeasedWork } from '../common/lifecycle/leased-work';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { RecordImports } from '../data/record-imports.service';
import { IMPORT_INSTANCE } from './import-instance';
import { ImportsRepository, type ImportRow } from './imports.repository';

/** What an import keeps of its request: the importer (its rows are stored as them), site and locale. */
export type ImportRequest = KeptRequest;

/**
 * Stores the staged rows of uploaded `all-or-nothing` imports (`valid-rows` stores its rows while
 * the upload is read, see ImportStager): the instance that received the file starts at once (in the
 * background); any instance takes over an import whose lease expired, where its staged rows stand
 * (each statement deletes the staged rows it stores). `all-or-nothing` stores every row in one
 * statement, so a crash leaves all of them staged or all of them stored. A `valid-rows` import left
 * `storing` with staged rows is stored IMPORT_BATCH_ROWS rows per statement (a cancel stops it
 * between two). An import whose upload was cut off with its instance is failed.
 */
@Injectable()
export class ImportProcessor extends LeasedWork<ImportRow> implements OnApplicationBootstrap {
  constructor(
    private readonly imports: ImportsRepository,
    private readonly records: RecordImports,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super('import');
  }

  onApplicationBootstrap(): void {
    this.takeOverEvery(Math.max(this.config.importLeaseMs / 2, 1000));
  }

  /** Stores the import's rows in the background; resolves when this instance stops working on it. */
  start(row: ImportRow): Promise<void> {
    return this.startWork(row);
  }

  /** Takes over one abandoned import, if any; resolves when it has been worked through. */
  async takeOver(): Promise<void> {
    const started = await this.claimAndStart();
    if (started) await started.work;
  }

  protected claimAbandoned(): Promise<ImportRow | null> {
    return this.imports.claimAbandoned(IMPORT_INSTANCE, this.config.importLeaseMs);
  }

  protected async process(row: ImportRow): Promise<void> {
    if (row.status === 'receiving') {
      // Its upload was cut off with the instance reading it: the rest of the file is gone.
      await this.imports.finish(row.id, IMPORT_INSTANCE, 'failed', { code: 'IMPORT_UPLOAD_INTERRUPTED' });
      await this.imports.dropValidRows(row.id);
      return;
    }
    const request = row.request as unknown as ImportRequest;
    const ctx = contextOfKept(request, { kind: 'import', importId: row.id });
    const target = {
      configId: row.configId,
      configVersion: row.configVersion,
      userId: row.userId,
      siteId: row.siteId,
    };
    const store = (rows: { after: number; through: number } | null) =>
      this.records.store(
        ctx,
        target,
        this.imports.takeValidRows(row.id, rows),
        this.imports.countStored(row.id, this.config.importLeaseMs),
      );
    try {
      if (row.mode === 'all-or-nothing') await store(null);
      else {
        const first = await this.imports.firstValidRow(row.id);
        const batch = this.config.importBatchRows;
        for (let after = first === null ? row.rowsRead : first - 1; after < row.rowsRead; after += batch) {
          if (this.stopping) return;
          const stored = await store({ after, through: after + batch });
          // Nothing stored: refused rows only, or the import was cancelled meanwhile.
          if (stored === 0 && (await this.imports.statusOf(row.id)) !== 'storing') return;
        }
      }
    } catch (error) {
      // The importer lost the permission or the form is gone: nothing more is stored.
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      await this.imports.finish(row.id, IMPORT_INSTANCE, 'failed', { code: error.code });
      await this.imports.dropValidRows(row.id);
      return;
    }
    await this.imports.finish(row.id, IMPORT_INSTANCE, 'done');
  }
}
