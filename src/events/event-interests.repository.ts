import { Inject, Injectable } from '@nestjs/common';
import { sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { domainEventInterests } from '../database/schema';
import type { EventInterest } from './event-interest';

const asRows = (interests: EventInterest[]) =>
  JSON.stringify(interests.map((interest) => ({ type: interest.type, config_id: interest.configId })));

/** The rows that decide which events a change writes (domain_event_interests). */
@Injectable()
export class EventInterestsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** Stores these interests, or renews their declaration time when stored already. */
  async declare(interests: EventInterest[]): Promise<void> {
    if (interests.length === 0) return;
    await this.db.execute(sql`
      insert into ${domainEventInterests} (type, config_id)
      select distinct type, config_id from json_to_recordset(${asRows(interests)}::json) as i(type text, config_id uuid)
      on conflict (type, config_id) do update set declared_at = now()`);
  }

  /**
   * Keeps exactly `wanted`: adds what is missing, and removes what is not wanted once it was
   * declared more than `graceMs` ago (a declaration younger than that may belong to a subscription
   * or trigger being stored right now, which `wanted` was read too early to include).
   */
  async reconcile(wanted: EventInterest[], graceMs: number): Promise<void> {
    const rows = asRows(wanted);
    await this.db.execute(sql`
      with wanted as (
        select distinct type, config_id from json_to_recordset(${rows}::json) as i(type text, config_id uuid)
      ),
      added as (
        insert into ${domainEventInterests} (type, config_id) select type, config_id from wanted
        on conflict (type, config_id) do nothing
      )
      delete from ${domainEventInterests} i
      where i.declared_at < now() - ${`${graceMs} milliseconds`}::interval
        and not exists (select 1 from wanted w where w.type = i.type and w.config_id is not distinct from i.config_id)`);
  }

  /** Every stored interest (tests, diagnostics). */
  async list(): Promise<EventInterest[]> {
    const rows = await this.db
      .select({ type: domainEventInterests.type, configId: domainEventInterests.configId })
      .from(domainEventInterests);
    return rows as EventInterest[];
  }
}
