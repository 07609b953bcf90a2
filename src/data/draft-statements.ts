import { sql, type SQL } from 'drizzle-orm';
import { appendEvents } from '../events/append-events';
import { appendHistory, NO_FIELD_CHANGES } from './history/record-history.repository';
import { RAW_RECORD_COLUMNS, type RecordRow } from './record.mapper';
import {
  entryOf,
  withHistory,
  type ChangeAuthor,
  type NewRecord,
  type RecordWrite,
} from './record-statements';

/*
 * The statements of drafts (README "Drafts"): saving one, submitting it, and moving the ones left
 * untouched to the trash. Each carries its history entry (and event) as the other record writes do.
 */

/** A new draft with its `draft_saved` entry (and `record.draft_saved` event where one is wanted). */
export function draftInsertStatement(record: NewRecord, author: ChangeAuthor): SQL {
  return withHistory(
    sql`insert into data_records (config_id, config_version, user_id, site_id, data, data_keys, is_draft)
      values (${record.configId}::uuid, ${record.configVersion}::int, ${record.userId ?? null}::uuid,
        ${record.siteId ?? null}::uuid, ${JSON.stringify(record.data)}::jsonb,
        ${sql.param(record.dataKeys ?? null)}::text[], true)
      returning *`,
    entryOf('draft_saved', author),
    sql`fdws_added_fields(changed.data)`,
  );
}

/**
 * Makes the draft `row` (locked by the caller, at the version read) a submitted record: its computed
 * values and configuration version are those of its check, its creation time is now (a record is
 * created when it is submitted; the draft's start stays in its history). The history entry is
 * `submitted` (no field changed); the event is a `record.created` with every field added, as a
 * create's, so webhooks and workflow triggers on created records take it unchanged.
 */
export function submitStatement(row: RecordRow, write: Omit<RecordWrite, 'data'>, author: ChangeAuthor): SQL {
  const now = new Date().toISOString();
  const origin = author.origin ? JSON.stringify(author.origin) : null;
  const computed = write.computedResults === null ? null : JSON.stringify(write.computedResults);
  return sql`with changed as (
      update data_records set is_draft = false, computed_results = ${computed}::jsonb,
        config_version = ${write.configVersion}::int, created_at = ${now}::timestamptz,
        updated_at = ${now}::timestamptz, version = data_records.version + 1
      where id = ${row.id}::uuid and version = ${row.version} and is_draft and is_active
      returning *),
    entry as (${appendHistory(entryOf('submitted', author), NO_FIELD_CHANGES)} returning id, record_id, changes),
    event as (${appendEvents(sql`select 'record.created', changed.site_id, changed.config_id,
        ${author.userId}::uuid, ${origin}::jsonb,
        json_build_object('record', fdws_record_json(row(changed.*)::data_records),
          'changes', fdws_added_fields(changed.data), 'historyId', entry.id)
      from changed join entry on entry.record_id = changed.id`)})
    select ${sql.raw(RAW_RECORD_COLUMNS)} from changed as data_records`;
}

/**
 * Moves up to `batchSize` drafts not changed since `cutoff` to the trash, each with its `deleted`
 * entry (no event: a draft's delete is none); rows another instance is moving are skipped.
 */
export function trashDraftsStatement(cutoff: Date, batchSize: number, author: ChangeAuthor): SQL {
  const at = cutoff.toISOString();
  const now = new Date().toISOString();
  return withHistory(
    sql`update data_records set is_active = false, deleted_at = ${now}::timestamptz,
        updated_at = ${now}::timestamptz, version = data_records.version + 1
      where id in (select id from data_records where is_active and is_draft and updated_at < ${at}::timestamptz
          limit ${batchSize} for update skip locked)
        and is_active and is_draft and updated_at < ${at}::timestamptz
      returning *`,
    entryOf('deleted', author),
    NO_FIELD_CHANGES,
  );
}
