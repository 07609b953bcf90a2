import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../common/context/request-context';
import type { FormPermissionName } from '../permissions/form-permission-names';
import { FormAccessService } from '../permissions/form-access.service';
import {
  RecordCsvRepository,
  type CsvCellRule,
  type CsvColumns,
  type CsvRows,
} from './record-csv.repository';
import { RecordCursorRepository, type OnBatch, type OnRecordBatch } from './record-cursor.repository';
import type { RecordValues } from './record.mapper';
import { parseConfigVersionFilter, parseStatusFilter } from './list-query.parser';
import {
  NO_FILTERS,
  parseRecordFilters,
  readScope,
  type RecordFilters,
  type RecordSelection,
} from './record-selection';
import { RecordStatsRepository } from './record-stats.repository';

/**
 * What other modules may ask of the data module: "the records this caller may see" on a
 * configuration (access checked, site and owner scope applied, filters), read in batches or counted.
 * Export, statistics and later the workflow engine use this instead of touching `data_records`.
 */
@Injectable()
export class VisibleRecords {
  constructor(
    private readonly access: FormAccessService,
    private readonly cursor: RecordCursorRepository,
    private readonly csv: RecordCsvRepository,
    private readonly stats: RecordStatsRepository,
  ) {}

  /**
   * Checks `permission` on the configuration (404 CONFIG_NOT_FOUND, then 403 FORBIDDEN) and selects
   * the caller's visible records of it: everyone's with viewAllResults (or as admin), else their own.
   * With `status=draft` in `query`, drafts instead: the caller's own, an admin's everyone's (README
   * "Drafts"); a bad `status` is a 422, after the access checks.
   */
  async select(
    ctx: RequestContext,
    configId: string,
    permission: FormPermissionName,
    filters: RecordFilters = NO_FILTERS,
    query: Record<string, unknown> = {},
  ): Promise<RecordSelection> {
    const access = await this.access.require(ctx, configId, permission);
    return { config: access.config, scope: readScope(ctx, access, parseStatusFilter(query)), filters };
  }

  /**
   * `filters`, `filter` and `configVersion` of a query string; malformed ones are a 422 (`filters`,
   * `configVersion`) or 400 (`filter`).
   */
  parseFilters(query: Record<string, unknown>): RecordFilters {
    return parseRecordFilters(query);
  }

  /** Only `configVersion` of a query string (statistics take no other filter); a bad one is a 422. */
  versionFilter(query: Record<string, unknown>): RecordFilters {
    return { ...NO_FILTERS, configVersion: parseConfigVersionFilter(query) };
  }

  /** Oldest first, one batch at a time; `onBatch` resolving false stops early. */
  forEachBatch(selection: RecordSelection, onBatch: OnRecordBatch, batchSize?: number): Promise<void> {
    return this.cursor.forEachBatch(selection, onBatch, batchSize);
  }

  /** As forEachBatch, with only the id, createdAt and the submitted values of each record. */
  forEachValuesBatch(
    selection: RecordSelection,
    onBatch: OnBatch<RecordValues>,
    batchSize?: number,
  ): Promise<void> {
    return this.cursor.forEachValuesBatch(selection, onBatch, batchSize);
  }

  /**
   * Oldest first, as CSV rows the database writes (PostgreSQL's COPY), or null where it cannot
   * (embedded PGlite, very wide rows): then read batches. See RecordCsvRepository.
   */
  csvRows(selection: RecordSelection, columns: CsvColumns, cells: CsvCellRule): Promise<CsvRows | null> {
    return this.csv.copy(selection, columns, cells);
  }

  /** Total, created today and this week (Monday) in `timeZone`, and records per user, most first. */
  counts(selection: RecordSelection, timeZone: string) {
    return this.stats.counts(selection, timeZone);
  }
}
