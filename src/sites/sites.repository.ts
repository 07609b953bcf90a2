import { Inject, Injectable } from '@nestjs/common';
import { and, asc, eq, ne, sql } from 'drizzle-orm';
import { isUuid } from '../common/validation/is-uuid';
import { DATABASE, type Database } from '../database/database.types';
import { sites } from '../database/schema';

export type SiteRow = typeof sites.$inferSelect;

@Injectable()
export class SitesRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async listActive(): Promise<SiteRow[]> {
    return this.db
      .select()
      .from(sites)
      .where(eq(sites.isActive, true))
      .orderBy(asc(sites.name), asc(sites.id));
  }

  async isActive(id: string): Promise<boolean> {
    return isUuid(id) && (await this.findActive(id)) !== null;
  }

  async findActive(id: string): Promise<SiteRow | null> {
    const [row] = await this.db
      .select()
      .from(sites)
      .where(and(eq(sites.id, id), eq(sites.isActive, true)))
      .limit(1);
    return row ?? null;
  }

  /**
   * Inserts or updates a site unless another active site already claims one of its domains. A
   * transaction-scoped advisory lock serializes these writes, so two concurrent requests cannot
   * both claim the same domain.
   */
  async saveClaimingDomains(site: {
    id?: string;
    name?: string;
    domains?: string[];
    isActive?: boolean;
  }): Promise<{ site: SiteRow | null; conflict: string | null }> {
    return this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext('sites:domains'))`);
      const [current] = site.id
        ? await tx.select().from(sites).where(eq(sites.id, site.id)).limit(1)
        : [undefined];
      const domains = site.domains ?? current?.domains ?? [];
      const willBeActive = site.isActive ?? current?.isActive ?? true;
      if (willBeActive) {
        for (const domain of domains) {
          const [other] = await tx
            .select({ id: sites.id })
            .from(sites)
            .where(
              and(
                eq(sites.isActive, true),
                sql`${sites.domains} @> ${JSON.stringify([domain])}::jsonb`,
                site.id ? ne(sites.id, site.id) : undefined,
              ),
            )
            .limit(1);
          if (other) return { site: null, conflict: domain };
        }
      }
      if (!site.id) {
        const [row] = await tx
          .insert(sites)
          .values({ name: site.name!, domains, isActive: willBeActive })
          .returning();
        return { site: row, conflict: null };
      }
      const [row] = await tx
        .update(sites)
        .set({
          ...(site.name !== undefined && { name: site.name }),
          ...(site.domains !== undefined && { domains: site.domains }),
          ...(site.isActive !== undefined && { isActive: site.isActive }),
          updatedAt: new Date(),
        })
        .where(eq(sites.id, site.id))
        .returning();
      return { site: row ?? null, conflict: null };
    });
  }

  async findActiveIdByDomain(domain: string): Promise<string | null> {
    const [row] = await this.db
      .select({ id: sites.id })
      .from(sites)
      .where(and(eq(sites.isActive, true), sql`${sites.domains} @> ${JSON.stringify([domain])}::jsonb`))
      .limit(1);
    return row?.id ?? null;
  }
}
