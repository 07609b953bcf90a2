import { sql, type SQL } from 'drizzle-orm';
import { isoInstant } from '../database/iso-instant';
import { appendEvents } from '../events/append-events';
import type { HistoryEntry } from './history/record-history.repository';

/**
 * A record row of the CTE `changed` as the API returns it (`_id`, system fields, `data` in its
 * submitted key order: `json`, not `jsonb`, so the order survives), for event payloads.
 */
const recordJson = sql`json_build_object(
    '_id', changed.id, 'configId', changed.config_id, 'userId', changed.user_id, 'siteId', changed.site_id,
    'data', coalesce((
      select json_object_agg(k.key, changed.data -> k.key order by k.n) from (
        select key, n from unnest(changed.data_keys) with ordinality as u(key, n) where changed.data ? key
        union all
        select key, 9223372036854775807 from jsonb_object_keys(changed.data) as key
        where changed.data_keys is null or not (key = any(changed.data_keys))
      ) as k), '{}'::json),
    'computedResults', changed.computed_results, 'isActive', changed.is_active,
    'createdAt', ${isoInstant(sql`changed.created_at`)}, 'updatedAt', ${isoInstant(sql`changed.updated_at`)},
    'deletedAt', ${isoInstant(sql`changed.deleted_at`)})`;

/**
 * The event of each changed row (`record.created`, `.updated`, `.deleted`, `.restored`), for the
 * statement of the change to carry next to its history entry (the CTE `entry`, returning `id`,
 * `record_id` and `changes`): `{record, changes, historyId}`.
 */
export function appendRecordEvents(entry: HistoryEntry): SQL {
  const origin = entry.origin ? JSON.stringify(entry.origin) : null;
  return appendEvents(sql`select ${`record.${entry.action}`}, changed.site_id, changed.config_id,
      ${entry.userId}::uuid, ${origin}::jsonb,
      json_build_object('record', ${recordJson}, 'changes', entry.changes, 'historyId', entry.id)
    from changed join entry on entry.record_id = changed.id`);
}
