import { sql, type SQL } from 'drizzle-orm';
import { domainEvents } from '../database/schema';

/**
 * The statement that appends events, for the statement of a change to carry as a data-modifying
 * CTE (as a record's history entry is): `rows` is a SELECT of the columns `type, site_id, config_id,
 * actor_id, origin, data` (one row per event), typically over the CTE that made the change, so an
 * event exists exactly when its change does. Only events somebody wants are written (migration
 * 0015's `fdws_event_wanted`: see domainEventInterests). Any feature writing events uses this; only the events
 * module reads and removes them.
 */
export function appendEvents(rows: SQL): SQL {
  return sql`insert into ${domainEvents} (type, site_id, config_id, actor_id, origin, data)
    select * from (${rows}) as e(type, site_id, config_id, actor_id, origin, data)
    where fdws_event_wanted(e.type, e.config_id)`;
}
