import type { dataRecords } from '../database/schema';
import type { RecordDto } from './dto/record.dto';

export type RecordRow = Omit<typeof dataRecords.$inferSelect, 'idempotencyKey'>;
/** A record as lists, the grid and exports read it: everything but the workflow log. */
export type ListedRecordRow = Omit<RecordRow, 'workflow'>;

/** A record as the API returns it: `_id` (spec), system fields, `data` exactly as stored. */
export function toRecordResponse(
  row: ListedRecordRow & { workflow?: unknown[] },
  options: { withWorkflow?: boolean } = {},
): RecordDto {
  return {
    _id: row.id,
    configId: row.configId,
    userId: row.userId ?? null,
    siteId: row.siteId ?? null,
    data: row.data,
    ...(row.computedResults ? { computedResults: row.computedResults } : {}),
    isActive: row.isActive,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...(options.withWorkflow ? { workflow: row.workflow ?? [] } : {}),
  };
}

/** The record columns of a raw SQL query, named as `fromRawRecord` expects. */
export const RAW_RECORD_COLUMNS = `data_records.id, data_records.config_id as "configId", data_records.user_id as "userId",
   data_records.site_id as "siteId", data_records.data, data_records.computed_results as "computedResults",
   data_records.is_active as "isActive", data_records.created_at as "createdAt", data_records.updated_at as "updatedAt"`;

/**
 * A row of a raw query (cursor, grid) as a typed record. Drivers differ in what they parse for raw
 * statements (node-postgres gives Dates and objects, PGlite may give strings), so both are accepted.
 */
export function fromRawRecord(raw: Record<string, unknown>): ListedRecordRow {
  const date = (value: unknown) => (value instanceof Date ? value : new Date(String(value)));
  const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);
  return {
    id: String(raw.id),
    configId: String(raw.configId),
    userId: (raw.userId as string | null) ?? null,
    siteId: (raw.siteId as string | null) ?? null,
    data: json(raw.data) as Record<string, unknown>,
    computedResults: (json(raw.computedResults) as Record<string, unknown> | null) ?? null,
    isActive: raw.isActive === true || raw.isActive === 't' || raw.isActive === 'true',
    createdAt: date(raw.createdAt),
    updatedAt: date(raw.updatedAt),
  };
}
