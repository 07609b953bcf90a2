import type { dataRecords } from '../database/schema';
import type { RecordDto } from './dto/record.dto';

export type RecordRow = Omit<typeof dataRecords.$inferSelect, 'idempotencyKey'>;
/** A record as lists, the grid and exports read it: everything but the workflow log. */
export type ListedRecordRow = Omit<RecordRow, 'workflow'>;

/**
 * The field order of a record's `data`: the order the keys were submitted in (`dataKeys`). Rows
 * stored before that order was kept have none; their keys the form's schema names come first, in the
 * schema's order, and the rest follow in the database's `jsonb` order.
 */
export function dataKeyOrder(
  row: Pick<ListedRecordRow, 'data' | 'dataKeys'>,
  schemaOrder: readonly string[] = [],
): string[] {
  const present = Object.keys(row.data ?? {});
  if (row.dataKeys) {
    const seen = new Set<string>();
    for (const key of row.dataKeys) if (Object.hasOwn(row.data, key)) seen.add(key);
    return [...seen, ...present.filter((key) => !seen.has(key))];
  }
  const rank = new Map(schemaOrder.map((key, index) => [key, index]));
  return present
    .map((key, index) => ({ key, order: rank.get(key) ?? schemaOrder.length + index }))
    .sort((a, b) => a.order - b.order)
    .map((entry) => entry.key);
}

/** `data` rebuilt in `dataKeyOrder` (with `Object.fromEntries`, so a `__proto__` key stays a plain key). */
export function orderedData(
  row: Pick<ListedRecordRow, 'data' | 'dataKeys'>,
  schemaOrder?: readonly string[],
): Record<string, unknown> {
  return Object.fromEntries(dataKeyOrder(row, schemaOrder).map((key) => [key, row.data[key]]));
}

/** The property order of a form's JSON Schema (stored as `json`, so the order is the author's). */
export function schemaOrderOf(schema: Record<string, unknown> | null | undefined): string[] {
  const properties = schema?.properties;
  return properties && typeof properties === 'object' && !Array.isArray(properties)
    ? Object.keys(properties)
    : [];
}

/** A record as the API returns it: `_id` (spec), system fields, `data` in its submitted key order. */
export function toRecordResponse(
  row: ListedRecordRow & { workflow?: unknown[] },
  options: { withWorkflow?: boolean; schemaOrder?: readonly string[] } = {},
): RecordDto {
  return {
    _id: row.id,
    configId: row.configId,
    userId: row.userId ?? null,
    siteId: row.siteId ?? null,
    data: orderedData(row, options.schemaOrder),
    ...(row.computedResults ? { computedResults: row.computedResults } : {}),
    isActive: row.isActive,
    // Only a draft says so: a submitted record's answer is as it always was.
    ...(row.isDraft ? { status: 'draft' as const } : {}),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...(row.deletedAt ? { deletedAt: row.deletedAt.toISOString() } : {}),
    version: row.version,
    configVersion: row.configVersion,
    ...(options.withWorkflow ? { workflow: row.workflow ?? [] } : {}),
  };
}

/** The record columns of a raw SQL query, named as `fromRawRecord` expects. */
export const RAW_RECORD_COLUMNS = `data_records.id, data_records.config_id as "configId", data_records.user_id as "userId",
   data_records.site_id as "siteId", data_records.data, data_records.data_keys as "dataKeys", data_records.computed_results as "computedResults",
   data_records.is_active as "isActive", data_records.created_at as "createdAt", data_records.updated_at as "updatedAt",
   data_records.deleted_at as "deletedAt", data_records.version, data_records.config_version as "configVersion",
   data_records.is_draft as "isDraft"`;

/**
 * What export cells are made of: the id, the creation time, the configuration version and the
 * submitted values in order.
 */
export type RecordValues = Pick<ListedRecordRow, 'id' | 'createdAt' | 'configVersion' | 'data' | 'dataKeys'>;

/** The columns of a raw SQL query that `fromRawValues` expects. */
export const RAW_VALUES_COLUMNS = `data_records.id, data_records.created_at as "createdAt",
   data_records.config_version as "configVersion", data_records.data, data_records.data_keys as "dataKeys"`;

// Drivers differ in what they parse for raw statements (node-postgres gives Dates and objects,
// PGlite may give strings), so both are accepted.
const date = (value: unknown) => (value instanceof Date ? value : new Date(String(value)));
const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);
const booleanOf = (value: unknown) => value === true || value === 't' || value === 'true';

/** A row of a raw query (cursor, grid) as a typed record. */
export function fromRawRecord(raw: Record<string, unknown>): ListedRecordRow {
  return {
    id: String(raw.id),
    configId: String(raw.configId),
    userId: (raw.userId as string | null) ?? null,
    siteId: (raw.siteId as string | null) ?? null,
    data: json(raw.data) as Record<string, unknown>,
    dataKeys: textArray(raw.dataKeys),
    computedResults: (json(raw.computedResults) as Record<string, unknown> | null) ?? null,
    isActive: booleanOf(raw.isActive),
    isDraft: booleanOf(raw.isDraft),
    createdAt: date(raw.createdAt),
    updatedAt: date(raw.updatedAt),
    deletedAt: raw.deletedAt === null || raw.deletedAt === undefined ? null : date(raw.deletedAt),
    version: Number(raw.version),
    configVersion: Number(raw.configVersion),
  };
}

/** A row of a raw query with RAW_VALUES_COLUMNS. */
export function fromRawValues(raw: Record<string, unknown>): RecordValues {
  return {
    id: String(raw.id),
    createdAt: date(raw.createdAt),
    configVersion: Number(raw.configVersion),
    data: json(raw.data) as Record<string, unknown>,
    dataKeys: textArray(raw.dataKeys),
  };
}

/** A `text[]` column of a raw query: an array, or (a driver that leaves arrays unparsed) its literal. */
function textArray(value: unknown): string[] | null {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map(String);
  throw new Error(`unexpected text[] value of type ${typeof value}`);
}
