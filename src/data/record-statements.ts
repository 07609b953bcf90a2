import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { ChangeOrigin } from '../common/context/request-context';
import { sameSite } from '../common/context/site-scope';
import type { CarriedWrite } from '../database/carried-write';
import { type Database } from '../database/database.types';
import { dataRecords } from '../database/schema';
import { compileSelector } from './grid/grid-selector';
import { comparatorKeys, orderByList } from './grid/grid-sql';
import type { PagingQuery } from './list-query.parser';
import { rowsOf } from '../database/raw-rows';
import {
  buildOnce,
  composedOnce,
  executeParametrized,
  valuesOfBoth,
  type Parametrized,
} from '../database/built-statement';
import { fromRawRecord, RAW_RECORD_COLUMNS, type ListedRecordRow, type RecordRow } from './record.mapper';
import { appendRecordEvents } from './record-events';
import {
  addedFieldsJson,
  appendHistory,
  fieldDiff,
  type HistoryEntry,
} from './history/record-history.repository';

/*
 * The statements of record writes and reads that RecordsRepository sends: each a function of its
 * input, so the repository reads as the list of intentions it serves.
 */

export type NewRecord = Pick<
  typeof dataRecords.$inferInsert,
  'configId' | 'userId' | 'siteId' | 'data' | 'dataKeys' | 'computedResults' | 'idempotencyKey'
> &
  Required<Pick<typeof dataRecords.$inferInsert, 'configVersion'>>;

/** The columns a page is read with (not the workflow log, which only the single-record read returns). */
export const RECORD_COLUMNS = sql.raw(
  'data_records.id, data_records.config_id, data_records.user_id, data_records.site_id, data_records.data, ' +
    'data_records.data_keys, data_records.computed_results, data_records.is_active, data_records.created_at, ' +
    'data_records.updated_at, data_records.deleted_at, data_records.version, data_records.config_version, ' +
    'data_records.is_draft',
);

/**
 * The paging order: a system column, or a data field in the grid's comparator order (missing/null,
 * numbers numerically, strings with dates as instants and text case-insensitively, booleans); ties
 * by creation, then id, in the same direction.
 */
export function orderBy(query: PagingQuery): SQL[] {
  const desc = query.order === 'desc';
  const dir = sql.raw(desc ? 'desc' : 'asc');
  const ties = [sql`${dataRecords.createdAt} ${dir}`, sql`${dataRecords.id} ${dir}`];
  if (query.sort.kind === 'data') {
    const keys = comparatorKeys(compileSelector(`data.${query.sort.path.join('.')}`, 'sortBy'), desc);
    return [orderByList(keys), ...ties];
  }
  const column = {
    createdAt: dataRecords.createdAt,
    updatedAt: dataRecords.updatedAt,
    userId: dataRecords.userId,
  }[query.sort.column];
  return query.sort.column === 'createdAt' ? ties : [sql`${column} ${dir}`, ...ties];
}

/** Who changes a record and through what: what the history entry of a change records. */
export interface ChangeAuthor {
  userId: string | null;
  origin: ChangeOrigin | null;
}

export const entryOf = (action: HistoryEntry['action'], author: ChangeAuthor): HistoryEntry => ({
  action,
  userId: author.userId,
  origin: author.origin,
});

/**
 * `change` (a data-modifying statement on data_records with RETURNING, named `changed` in a CTE),
 * its history entry and its domain event (webhooks, workflow triggers) in the same statement, and
 * the changed rows as the API reads them. One statement, so the change, its entry and its event
 * commit together without a transaction of their own.
 */
export function withHistory(
  change: SQL,
  entry: HistoryEntry,
  changes: SQL,
  extra: { before?: SQL; join?: SQL } = {},
) {
  return sql`with ${extra.before ?? sql``} changed as (${change}),
    entry as (${appendHistory(entry, changes, extra.join)} returning id, record_id, changes),
    event as (${appendRecordEvents(entry)})
    select ${sql.raw(RAW_RECORD_COLUMNS)} from changed as data_records`;
}

/**
 * fdws_insert_record's values for a record and its author: jsonb as JSON text, absent ones SQL NULL;
 * `changes` is the `created` entry's document, built here (migration 0028).
 */
function insertValues(record: NewRecord, author: ChangeAuthor) {
  const computed = record.computedResults ?? null;
  return {
    configId: record.configId,
    configVersion: record.configVersion,
    userId: record.userId ?? null,
    siteId: record.siteId ?? null,
    data: JSON.stringify(record.data),
    dataKeys: record.dataKeys ?? null,
    computed: computed === null ? null : JSON.stringify(computed),
    idempotencyKey: record.idempotencyKey ?? null,
    authorId: author.userId,
    origin: author.origin ? JSON.stringify(author.origin) : null,
    changes: addedFieldsJson(record.data),
  };
}
type InsertValues = ReturnType<typeof insertValues>;

/**
 * The insert of a submission with its `created` entry and event: one call of `fdws_insert_record`
 * (migration 0014; PostgreSQL keeps its plans per connection, where the same writes as CTEs were
 * parsed and planned on every create). A keyed one (a workflow step's idempotency key) lets the
 * unique key decide: on a conflict nothing is inserted, no entry written, no row returned. A record
 * without computed results stores SQL NULL. A carried write rides along as a data-modifying CTE of
 * the same statement, its answer as column `carried_answer`. `value` gives each argument: a
 * parameter, or a placeholder of a template (`insertBuiltOnce`, `insertCarrying`).
 */
function insertCall(value: (name: keyof InsertValues) => unknown, carried: SQL | null): SQL {
  return sql`${carried ? sql`with carried as (${carried}) ` : sql``}select ${sql.raw(RAW_RECORD_COLUMNS)}
    ${carried ? sql`, (select answer from carried) as carried_answer` : sql``}
    from fdws_insert_record(${value('configId')}::uuid, ${value('configVersion')}::int, ${value('userId')}::uuid,
      ${value('siteId')}::uuid, ${value('data')}::jsonb, ${value('dataKeys')}::text[], ${value('computed')}::jsonb,
      ${value('idempotencyKey')}::text, ${value('authorId')}::uuid, ${value('origin')}::jsonb,
      ${value('changes')}::jsonb) as data_records`;
}

export function insertStatement(record: NewRecord, author: ChangeAuthor): SQL {
  const values = insertValues(record, author);
  // sql.param: a value as one parameter (an array, dataKeys, would otherwise become a list).
  return insertCall((name) => sql.param(values[name]), null);
}

/** The insert's template carrying a write's template, made once per carried template. */
const insertCarryingTemplate = composedOnce((carried: SQL) =>
  insertCall((name) => sql.placeholder(name), carried),
);

/** The insert carrying `carried` (see insertCall), as a template and its values. */
export function insertCarrying(record: NewRecord, author: ChangeAuthor, carried: Parametrized): Parametrized {
  return {
    template: insertCarryingTemplate(carried.template),
    values: valuesOfBoth(insertValues(record, author), carried.values),
  };
}

/** The insert without a carried write, built into its text once (see buildOnce): the create's statement. */
export function insertBuiltOnce(
  db: Database,
): (record: NewRecord, author: ChangeAuthor) => Promise<ListedRecordRow | null> {
  const insert = buildOnce(
    db,
    'record_insert',
    insertCall((name) => sql.placeholder(name), null),
  );
  return async (record, author) => {
    const [row] = await insert(insertValues(record, author));
    return row ? fromRawRecord(row) : null;
  };
}

/**
 * The first record a statement returns, mapped. `carried`: the write that statement carries (see
 * insertStatement), handed its answer with the record. A keyed insert that inserted nothing returns
 * no row, so the write's answer stays unknown (undefined) then.
 */
export async function firstRecord(
  db: Pick<Database, 'execute'>,
  statement: SQL,
  carried: CarriedWrite | null = null,
): Promise<ListedRecordRow | null> {
  return recordOf(rowsOf(await db.execute(statement)), carried);
}

/** firstRecord of an insert carrying a write (insertCarrying), on the pool or in a transaction. */
export async function firstRecordCarrying(
  db: Pick<Database, '_' | 'execute'>,
  statement: Parametrized,
  carried: CarriedWrite,
): Promise<ListedRecordRow | null> {
  return recordOf(await executeParametrized(db, statement), carried);
}

function recordOf(rows: Record<string, unknown>[], carried: CarriedWrite | null): ListedRecordRow | null {
  const [row] = rows;
  if (!row) return null;
  carried?.answered(row.carried_answer);
  return fromRawRecord(row);
}

/**
 * Serializes the save-limit decisions of one user on one configuration (creates and restores) for
 * the rest of the transaction, so a count and the insert or restore after it cannot interleave.
 */
export async function lockSaveLimit(tx: Pick<Database, 'execute'>, configId: string, userId: string) {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`${configId}:${userId}`}, 0))`);
}

/** Up to `limit` ids of the user's active records of the configuration and site, oldest first. */
export async function activeRecordIds(
  tx: Pick<Database, 'select'>,
  owner: { configId: string; userId: string; siteId: string | null },
  limit: number,
): Promise<string[]> {
  const rows = await tx
    .select({ id: dataRecords.id })
    .from(dataRecords)
    .where(
      and(
        eq(dataRecords.configId, owner.configId),
        eq(dataRecords.userId, owner.userId),
        eq(dataRecords.isActive, true),
        // Drafts do not count against the save limit (README "Drafts").
        sql`not ${dataRecords.isDraft}`,
        sameSite(dataRecords.siteId, owner.siteId),
      ),
    )
    .orderBy(dataRecords.createdAt)
    .limit(limit);
  return rows.map((row) => row.id);
}

export async function recordByKey(db: Pick<Database, 'select'>, key: string): Promise<RecordRow | null> {
  const [row] = await db.select().from(dataRecords).where(eq(dataRecords.idempotencyKey, key)).limit(1);
  return row ?? null;
}

/**
 * Work of another module that must commit with a record's write (the attachments module links the
 * record's files): run in the write's transaction on the row written; throwing rolls the write back.
 */
export type AlongsideWrite = (
  tx: Pick<Database, 'execute' | 'select' | 'update'>,
  record: Pick<ListedRecordRow, 'id' | 'siteId' | 'data'>,
) => Promise<void>;

/**
 * New data of a record, its computed results (null: none stored) and the configuration version it
 * was validated against.
 */
export interface RecordWrite {
  data: Record<string, unknown>;
  computedResults: Record<string, unknown> | null;
  configVersion: number;
}

/** The condition of a conditional write (If-Match): the row is at one of `versions`; none when null. */
export function atVersion(versions: number[] | null): SQL {
  return versions === null ? sql`` : sql`and data_records.version = any(${sql.param(versions)}::int[])`;
}

/**
 * Replaces the data of `row` (locked by the caller) with an `updated` entry (`draft_saved` for a
 * draft) of the fields that changed and the version raised by one; the update also requires the
 * version read, so it cannot apply to any other.
 */
export function replaceDataStatement(row: RecordRow, write: RecordWrite, author: ChangeAuthor): SQL {
  const before = sql`before as (select id, data from data_records where id = ${row.id}::uuid),`;
  return withHistory(
    sql`update data_records set data = ${JSON.stringify(write.data)}::jsonb,
        data_keys = ${sql.param(Object.keys(write.data))}::text[],
        computed_results = ${write.computedResults === null ? null : JSON.stringify(write.computedResults)}::jsonb,
        config_version = ${write.configVersion}::int,
        updated_at = ${new Date().toISOString()}::timestamptz, version = data_records.version + 1
      from before where data_records.id = before.id and data_records.version = ${row.version}
      returning data_records.*`,
    entryOf(row.isDraft ? 'draft_saved' : 'updated', author),
    fieldDiff(sql`before.data`, sql`changed.data`),
    { before, join: sql`join before on before.id = changed.id` },
  );
}
