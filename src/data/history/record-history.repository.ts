import { Inject, Injectable } from '@nestjs/common';
import { and, count, desc, eq, isNull, sql, type SQL } from 'drizzle-orm';
import type { ChangeOrigin } from '../../common/context/request-context';
import { DATABASE, type Database } from '../../database/database.types';
import { recordHistory } from '../../database/schema';

/**
 * `draft_saved`: a draft was created or changed; `submitted`: a draft became a submitted record
 * (README "Drafts").
 */
export type HistoryAction = 'created' | 'updated' | 'deleted' | 'restored' | 'draft_saved' | 'submitted';

/** Who made a change and through what; the change itself is computed in the statement. */
export interface HistoryEntry {
  action: HistoryAction;
  userId: string | null;
  origin: ChangeOrigin | null;
}

export type HistoryRow = typeof recordHistory.$inferSelect;

/**
 * The statement that appends one history entry per row of the data-modifying CTE named `changed`
 * (rows of data_records, as RETURNING gives them). The records repository runs it as a CTE of the
 * statement that makes the change, so the change and its entry are one write: both or neither.
 * `changes` is an expression over `changed` (and whatever `join` adds), e.g. `fieldDiff`.
 */
export function appendHistory(entry: HistoryEntry, changes: SQL, join: SQL = sql``): SQL {
  const origin = entry.origin ? JSON.stringify(entry.origin) : null;
  return sql`insert into ${recordHistory} (record_id, config_id, site_id, action, user_id, origin, changes,
      config_version)
    select changed.id, changed.config_id, changed.site_id, ${entry.action}, ${entry.userId}::uuid,
      ${origin}::jsonb, ${changes}, changed.config_version
    from changed ${join}`;
}

/**
 * A new record's `created` changes, `{field: {after: value}}` for each field of `data`, as JSON text:
 * the document `fdws_added_fields` (migration 0014) builds from the stored data, built where the data
 * is at hand because that costs the service less than it costs the database (migration 0028). A
 * field whose value is undefined is left out, as JSON.stringify leaves it out of the stored data
 * (a workflow's save gets its data from steps, not only from a parsed body). The object has no
 * prototype, so a field named `__proto__` stays a field.
 */
export function addedFieldsJson(data: Record<string, unknown>): string {
  const changes: Record<string, { after: unknown }> = Object.create(null);
  for (const field of Object.keys(data)) {
    if (data[field] !== undefined) changes[field] = { after: data[field] };
  }
  return JSON.stringify(changes);
}

/**
 * The per-field diff of two `data` documents (jsonb expressions): `{field: {before, after}}` for
 * every top-level field whose value differs (compared as JSON, so key order inside objects does not
 * count); `before` is absent for an added field, `after` for a removed one. `{}` when equal.
 */
export function fieldDiff(before: SQL, after: SQL): SQL {
  return sql`(select coalesce(jsonb_object_agg(k.key, case
        when not (${before} ? k.key) then jsonb_build_object('after', ${after} -> k.key)
        when not (${after} ? k.key) then jsonb_build_object('before', ${before} -> k.key)
        else jsonb_build_object('before', ${before} -> k.key, 'after', ${after} -> k.key) end), '{}'::jsonb)
    from (select jsonb_object_keys(${before}) union select jsonb_object_keys(${after})) as k(key)
    where (${before} -> k.key) is distinct from (${after} -> k.key))`;
}

/** No change of `data` (a delete or a restore). */
export const NO_FIELD_CHANGES = sql`'{}'::jsonb`;

/**
 * Reads the history of records. Append-only by construction: nothing here deletes an entry or
 * changes what happened; the trash purge removes records, never their entries. The one update is an
 * erasure's, which keeps every entry and drops its values.
 */
@Injectable()
export class RecordHistoryRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** One page of a record's entries of one configuration, newest first, and how many there are. */
  async page(
    recordId: string,
    configId: string,
    paging: { page: number; limit: number },
  ): Promise<{ rows: HistoryRow[]; total: number }> {
    const where = and(eq(recordHistory.recordId, recordId), eq(recordHistory.configId, configId));
    const [rows, [{ total }]] = await Promise.all([
      this.db
        .select()
        .from(recordHistory)
        .where(where)
        .orderBy(desc(recordHistory.id))
        .limit(paging.limit)
        .offset((paging.page - 1) * paging.limit),
      this.db.select({ total: count() }).from(recordHistory).where(where),
    ]);
    return { rows, total: Number(total) };
  }

  /**
   * Drops the values of every entry of these records: `changes` keeps each field's name with an
   * empty change (`{"ssn": {}}`), and `erasedAt` says when. An entry erased already is left as it
   * is; how many entries were erased now.
   */
  async eraseValuesOf(recordIds: string[]): Promise<number> {
    if (recordIds.length === 0) return 0;
    const rows = await this.db
      .update(recordHistory)
      .set({
        changes: sql`(select coalesce(jsonb_object_agg(k, '{}'::jsonb), '{}'::jsonb)
          from jsonb_object_keys(${recordHistory.changes}) as k)`,
        erasedAt: sql`now()`,
      })
      .where(
        and(
          sql`${recordHistory.recordId} = any(${sql.param(recordIds)}::uuid[])`,
          isNull(recordHistory.erasedAt),
        ),
      )
      .returning({ id: recordHistory.id });
    return rows.length;
  }

  /**
   * The fields changed by a record's newest `entries` entries, sorted. Every change of a record
   * raises its version by one and writes one entry (created: version 1), so the newest
   * `current - n` entries are the changes since version n (rows given version 1 when versions came
   * in have all their older entries before those).
   */
  async fieldsChangedInLatest(recordId: string, entries: number): Promise<string[]> {
    if (entries <= 0) return [];
    const latest = this.db
      .select({ changes: recordHistory.changes })
      .from(recordHistory)
      .where(eq(recordHistory.recordId, recordId))
      .orderBy(desc(recordHistory.id))
      .limit(entries)
      .as('latest');
    const rows = await this.db
      .selectDistinct({ field: sql<string>`jsonb_object_keys(${latest.changes})` })
      .from(latest);
    return rows.map((row) => row.field).sort();
  }
}
