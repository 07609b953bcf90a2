import { sql } from 'drizzle-orm';
import {
  index,
  integer,
  json,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt, primaryId, updatedAt } from './columns';
import { formConfigs } from './form-configs.table';
import { sites } from './sites.table';

/**
 * Bulk imports of records: one row per uploaded file. `status` goes `receiving` (the
 * upload is being parsed into data_import_rows) → `storing` (the valid rows move into data_records
 * under a lease) → `done`; or `refused` (all-or-nothing with refusals), `cancelled`, `failed`.
 */
export const dataImports = pgTable(
  'data_imports',
  {
    id: primaryId(),
    configId: uuid('config_id')
      .notNull()
      .references(() => formConfigs.id),
    /** The site the imported records belong to (as a create through the same host would). */
    siteId: uuid('site_id').references(() => sites.id),
    userId: uuid('user_id').notNull(),
    /** The form's version every row was checked against at upload; the stored records carry it. */
    configVersion: integer('config_version').notNull(),
    /** What a resumed import needs of its request: the importer, site and locale. */
    request: jsonb('request').$type<Record<string, unknown>>().notNull(),
    mode: text('mode').notNull(),
    format: text('format').notNull(),
    status: text('status').notNull(),
    idempotencyKey: text('idempotency_key'),
    rowsRead: integer('rows_read').notNull().default(0),
    rowsRefused: integer('rows_refused').notNull().default(0),
    rowsStored: integer('rows_stored').notNull().default(0),
    /** Why a failed import failed: `{code, message}`. */
    error: jsonb('error').$type<Record<string, unknown> | null>(),
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamp('lease_until', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
  },
  (table) => [
    uniqueIndex('data_imports_idempotency_idx')
      .on(table.userId, table.configId, table.idempotencyKey)
      .where(sql`${table.idempotencyKey} is not null`),
    index('data_imports_unfinished_idx')
      .on(table.createdAt)
      .where(sql`${table.status} in ('receiving', 'storing')`),
  ],
);

/**
 * The staged rows of an import, written while the upload is parsed: valid rows (`data` as json, so
 * the file's key order survives, with their computed values) until they move into data_records,
 * refused rows (`refusals`, no data) for the report.
 */
export const dataImportRows = pgTable(
  'data_import_rows',
  {
    importId: uuid('import_id')
      .notNull()
      .references(() => dataImports.id, { onDelete: 'cascade' }),
    rowNumber: integer('row_number').notNull(),
    data: json('data').$type<Record<string, unknown> | null>(),
    computedResults: json('computed_results').$type<Record<string, unknown> | null>(),
    refusals: jsonb('refusals').$type<{ field: string; rule: string; message: string }[] | null>(),
  },
  (table) => [primaryKey({ columns: [table.importId, table.rowNumber] })],
);
