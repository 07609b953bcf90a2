import { sql, type SQL } from 'drizzle-orm';
import { appendEvents } from '../events/append-events';
import type { HistoryEntry } from './history/record-history.repository';

/**
 * A record row of the CTE `changed` as the API returns it (`_id`, system fields, `data` in its
 * submitted key order), for event payloads: migration 0014's `fdws_record_json`, which the insert
 * function uses too.
 */
const recordJson = sql`fdws_record_json(row(changed.*)::data_records)`;

/**
 * The event of each changed row (`record.created`, `.updated`, `.deleted`, `.restored`, and
 * `record.draft_saved` for a draft's save), for the statement of the change to carry next to its
 * history entry (the CTE `entry`, returning `id`, `record_id` and `changes`): `{record, changes,
 * historyId}`. A draft's other changes (its delete, restore, move to the trash) are no event:
 * consumers of record events see drafts only through `record.draft_saved`, which they name.
 */
export function appendRecordEvents(entry: HistoryEntry): SQL {
  const origin = entry.origin ? JSON.stringify(entry.origin) : null;
  const draftSaved = entry.action === 'draft_saved';
  return appendEvents(sql`select ${`record.${entry.action}`}, changed.site_id, changed.config_id,
      ${entry.userId}::uuid, ${origin}::jsonb,
      json_build_object('record', ${recordJson}, 'changes', entry.changes, 'historyId', entry.id)
    from changed join entry on entry.record_id = changed.id
    where ${draftSaved ? sql`changed.is_draft` : sql`not changed.is_draft`}`);
}
