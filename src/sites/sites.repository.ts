import { Inject, Injectable } from '@nestjs/common';
import { and, eq, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import { sites } from '../database/schema';

export type SiteRow = typeof sites.$inferSelect;

@Injectable()
export class SitesRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async findActiveIdByDomain(domain: string): Promise<string | null> {
    const [row] = await this.db
      .select({ id: sites.id })
      .from(sites)
      .where(and(eq(sites.isActive, true), sql`${sites.domains} @> ${JSON.stringify([domain])}::jsonb`))
      .limit(1);
    return row?.id ?? null;
  }
}
