import { Inject, Injectable } from '@nestjs/common';
import { and, count, desc, eq } from 'drizzle-orm';
import { isUuid } from '../common/validation/is-uuid';
import { DATABASE, type Database } from '../database/database.types';
import { formConfigVersions } from '../database/schema';
import type { ConfigRow } from './config-row';

export type ConfigVersionRow = typeof formConfigVersions.$inferSelect;
/** A version as the listing shows it: who, when, how, what changed; not the content. */
export type ConfigVersionSummaryRow = Pick<
  ConfigVersionRow,
  'version' | 'action' | 'restoredFrom' | 'changedParts' | 'authorId' | 'createdAt'
>;
export type ConfigVersionAction = 'created' | 'updated' | 'restored' | 'recorded';

/** The content of a configuration a version keeps (and a restore brings back, but for the site). */
export const VERSIONED_PARTS = [
  'title',
  'type',
  'tags',
  'siteId',
  'description',
  'schema',
  'validationRules',
  'computedRules',
  'preferences',
  'definition',
] as const satisfies readonly (keyof ConfigRow & keyof ConfigVersionRow)[];
export type VersionedPart = (typeof VERSIONED_PARTS)[number];

/** Why a version was written: by whom, how, and (a restore) from which version. */
export interface VersionOrigin {
  action: Exclude<ConfigVersionAction, 'recorded'>;
  authorId: string | null;
  restoredFrom?: number;
}

/**
 * The parts of `after` that differ from `before`, compared as JSON text (so a reordered schema, whose
 * property order is the form's field order, counts as changed).
 */
export function changedParts(
  before: Pick<ConfigRow, VersionedPart> | null,
  after: Pick<ConfigRow, VersionedPart>,
): VersionedPart[] {
  if (!before) return [];
  return VERSIONED_PARTS.filter(
    (part) => JSON.stringify(before[part] ?? null) !== JSON.stringify(after[part] ?? null),
  );
}

/**
 * The version row of a configuration as it now is (`row`, just written), for the statement's own
 * transaction: written together with the change, so a version exists exactly when its change does.
 */
export function versionRowOf(
  row: ConfigRow,
  origin: VersionOrigin,
  parts: VersionedPart[],
): typeof formConfigVersions.$inferInsert {
  return {
    configId: row.id,
    version: row.version,
    action: origin.action,
    restoredFrom: origin.restoredFrom ?? null,
    changedParts: parts,
    authorId: origin.authorId,
    title: row.title,
    type: row.type,
    tags: row.tags,
    siteId: row.siteId,
    description: row.description,
    schema: row.schema,
    validationRules: row.validationRules,
    computedRules: row.computedRules,
    preferences: row.preferences,
    definition: row.definition,
    createdAt: row.updatedAt,
  };
}

/** Reads the kept versions of configurations; nothing here changes or removes one. */
@Injectable()
export class FormConfigVersionsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** One page of a configuration's versions, newest first, and how many there are. */
  async page(
    configId: string,
    paging: { page: number; limit: number },
  ): Promise<{ rows: ConfigVersionSummaryRow[]; total: number }> {
    const where = eq(formConfigVersions.configId, configId);
    const [rows, [{ total }]] = await Promise.all([
      this.db
        .select({
          version: formConfigVersions.version,
          action: formConfigVersions.action,
          restoredFrom: formConfigVersions.restoredFrom,
          changedParts: formConfigVersions.changedParts,
          authorId: formConfigVersions.authorId,
          createdAt: formConfigVersions.createdAt,
        })
        .from(formConfigVersions)
        .where(where)
        .orderBy(desc(formConfigVersions.version))
        .limit(paging.limit)
        .offset((paging.page - 1) * paging.limit),
      this.db.select({ total: count() }).from(formConfigVersions).where(where),
    ]);
    return { rows, total: Number(total) };
  }

  async find(configId: string, version: number): Promise<ConfigVersionRow | null> {
    if (!isUuid(configId)) return null;
    const [row] = await this.db
      .select()
      .from(formConfigVersions)
      .where(and(eq(formConfigVersions.configId, configId), eq(formConfigVersions.version, version)))
      .limit(1);
    return row ?? null;
  }
}
