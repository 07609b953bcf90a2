import { Inject, Injectable } from '@nestjs/common';
import { and, eq, inArray, isNotNull, sql, type SQL } from 'drizzle-orm';
import type { FieldError } from '../common/errors/app-error';
import { isUuid } from '../common/validation/is-uuid';
import { DATABASE, type Database } from '../database/database.types';
import { leaseUntil, oldestAbandoned } from '../database/leases';
import { rowsOf } from '../database/raw-rows';
import { isUniqueViolation } from '../database/unique-violation';
import { dataImportRows, dataImports } from '../database/schema';

export type ImportRow = typeof dataImports.$inferSelect;
export type NewImport = Pick<
  typeof dataImports.$inferInsert,
  'configId' | 'siteId' | 'userId' | 'configVersion' | 'request' | 'mode' | 'format' | 'idempotencyKey'
>;
export type ImportStatus = 'receiving' | 'storing' | 'done' | 'refused' | 'cancelled' | 'failed';

/** A row of a file as staged: its data and computed values when valid, its refusals when not. */
export interface StagedRow {
  rowNumber: number;
  data: Record<string, unknown> | null;
  computedResults: Record<string, unknown> | null;
  refusals: FieldError[] | null;
}

export interface Refusal extends FieldError {
  row: number;
}

const json = (value: unknown) => (value === null ? null : JSON.stringify(value));
/** A failed import that stored rows, within its key's lifetime: the same key continues it. */
const resumable = (maxAgeMs: number) =>
  sql`${dataImports.status} = 'failed' and ${dataImports.rowsStored} > 0
    and ${dataImports.createdAt} >= now() - ${`${maxAgeMs} milliseconds`}::interval`;
const held = (id: string, owner: string) => and(eq(dataImports.id, id), eq(dataImports.leaseOwner, owner));
/** The import receiving an upload, held by `owner` (not cancelled, not taken for abandoned). */
const receiving = (id: string, owner: string) =>
  sql`id = ${id}::uuid and lease_owner = ${owner} and status = 'receiving'`;
/** The same, with `after` rows counted as read: a batch's turn. */
const batchHeld = (id: string, owner: string, after: number) =>
  sql`${receiving(id, owner)} and rows_read = ${after}`;

/**
 * Imports and their staged rows. The instance receiving an upload, then the one storing its rows,
 * holds the import under a lease it renews with every batch; an import whose lease expired is taken
 * over (storing resumes where the staged rows stand; an upload cut off fails, its file being gone).
 */
@Injectable()
export class ImportsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** Stored `receiving`, held by `owner`; null when the idempotency key is taken. */
  async insert(row: NewImport, owner: string, leaseMs: number): Promise<ImportRow | null> {
    try {
      const [inserted] = await this.db
        .insert(dataImports)
        .values({ ...row, status: 'receiving', leaseOwner: owner, leaseUntil: leaseUntil(leaseMs) })
        .returning();
      return inserted;
    } catch (error) {
      if (isUniqueViolation(error, 'data_imports_idempotency_idx')) return null;
      throw error;
    }
  }

  async findById(id: string): Promise<ImportRow | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.db.select().from(dataImports).where(eq(dataImports.id, id)).limit(1);
    return row ?? null;
  }

  async findByKey(userId: string, configId: string, key: string): Promise<ImportRow | null> {
    const [row] = await this.db
      .select()
      .from(dataImports)
      .where(
        and(
          eq(dataImports.userId, userId),
          eq(dataImports.configId, configId),
          eq(dataImports.idempotencyKey, key),
        ),
      )
      .limit(1);
    return row ?? null;
  }

  /**
   * Frees the key of an import that no longer answers it: a failed upload that stored nothing (sent
   * again, it is a new import) or one older than `maxAgeMs` (keys are kept as long as the
   * idempotency module's). A failed one that stored rows is continued instead (reopen).
   */
  async releaseKey(id: string, maxAgeMs: number): Promise<boolean> {
    const rows = await this.db
      .update(dataImports)
      .set({ idempotencyKey: null })
      .where(
        and(
          eq(dataImports.id, id),
          sql`((${dataImports.status} = 'failed' and ${dataImports.rowsStored} = 0)
            or ${dataImports.createdAt} < now() - ${`${maxAgeMs} milliseconds`}::interval)`,
        ),
      )
      .returning({ id: dataImports.id });
    return rows.length === 1;
  }

  /**
   * Stages a batch of rows and counts `read` rows as read (`rows` are those kept: every row, or the
   * refused ones only), renewing the lease, in one statement; false (nothing staged) when the
   * lease is lost (the upload was taken for abandoned, or cancelled), or when the import has not
   * counted exactly `after` rows as read (see countBatch).
   */
  async stage(
    id: string,
    owner: string,
    leaseMs: number,
    rows: StagedRow[],
    read: number,
    after: number,
  ): Promise<boolean> {
    const refused = rows.filter((row) => row.refusals !== null).length;
    const result = await this.db.execute(sql`with counted as (
        update ${dataImports} set rows_read = rows_read + ${read}, rows_refused = rows_refused + ${refused},
          lease_until = ${leaseUntil(leaseMs)}, updated_at = now()
        where ${batchHeld(id, owner, after)} returning id),
      staged as (insert into ${dataImportRows} (import_id, row_number, data, computed_results, refusals)
        select counted.id, u.n, u.d::json, u.c::json, u.r::jsonb from counted,
          unnest(${sql.param(rows.map((row) => row.rowNumber))}::int[],
            ${sql.param(rows.map((row) => json(row.data)))}::text[],
            ${sql.param(rows.map((row) => json(row.computedResults)))}::text[],
            ${sql.param(rows.map((row) => json(row.refusals)))}::text[]) as u(n, d, c, r)
        returning 1)
      select count(*)::int as staged from counted`);
    return Number(rowsOf(result)[0]?.staged ?? 0) === 1;
  }

  /**
   * The valid rows of a batch read by `owner`, as the bulk insert takes them (`row_number, data,
   * computed_results`): none once the import is no longer held by it as `receiving` (cancelled, or
   * taken for abandoned). The import's row is not locked here, so the batch before can still be
   * stored meanwhile: the batch's count (countBatch), written last, is what checks it again.
   */
  batchRows(id: string, owner: string, rows: StagedRow[]): SQL {
    // One JSON text for the batch (`[[n, data, computed], ...]`): one native stringify, where text
    // arrays cost a stringify and an escaping pass per row and value. json, not jsonb: key order.
    const batch = JSON.stringify(rows.map((row) => [row.rowNumber, row.data, row.computedResults]));
    return sql`select (u.e ->> 0)::int as row_number, u.e -> 1 as data,
        case when json_typeof(u.e -> 2) = 'null' then null else u.e -> 2 end as computed_results
      from json_array_elements(${batch}::json) as u(e)
      where exists (select 1 from ${dataImports}
        where ${receiving(id, owner)})`;
  }

  /**
   * A stored batch's count: `read` rows read, `refused` of them refused, `inserted` stored; the lease
   * renewed. It finds the import only while `owner` holds it and exactly `after` rows are counted
   * as read: the batches before it are counted (the stager counts them in order), so the rows read
   * are always a prefix of the file, which is where a resumed upload goes on.
   */
  countBatch(
    id: string,
    owner: string,
    leaseMs: number,
    read: number,
    refused: number,
    after: number,
  ): (inserted: SQL) => SQL {
    return (inserted) => sql`update ${dataImports} set rows_read = rows_read + ${read},
        rows_refused = rows_refused + ${refused}, rows_stored = rows_stored + ${inserted},
        lease_until = ${leaseUntil(leaseMs)}, updated_at = now()
      where ${batchHeld(id, owner, after)}`;
  }

  /** The refused rows of a stored batch, kept for the report (only while `owner` holds the import). */
  batchRefusals(id: string, owner: string, rows: StagedRow[]): SQL {
    return sql`insert into ${dataImportRows} (import_id, row_number, refusals)
      select ${id}::uuid, u.n, u.r::jsonb
      from unnest(${sql.param(rows.map((row) => row.rowNumber))}::int[],
        ${sql.param(rows.map((row) => json(row.refusals)))}::text[]) as u(n, r)
      where exists (select 1 from ${dataImports}
        where ${receiving(id, owner)})
      on conflict do nothing`;
  }

  /**
   * Takes up again, as `receiving` and held by `owner`, a failed import that had stored rows
   * (an upload cut off, a file unreadable past its first rows) and is younger than `maxAgeMs`:
   * the same file sent again continues after its last row read. Null when it is not such an import.
   */
  async reopen(id: string, owner: string, leaseMs: number, maxAgeMs: number): Promise<ImportRow | null> {
    const [row] = await this.db
      .update(dataImports)
      .set({
        status: 'receiving',
        error: null,
        finishedAt: null,
        updatedAt: new Date(),
        leaseOwner: owner,
        leaseUntil: leaseUntil(leaseMs),
      })
      .where(and(eq(dataImports.id, id), resumable(maxAgeMs)))
      .returning();
    return row ?? null;
  }

  /** Ends the upload: the import goes to `status` (`storing` keeps the lease for the storing). */
  async uploaded(
    id: string,
    owner: string,
    status: ImportStatus,
    leaseMs: number,
  ): Promise<ImportRow | null> {
    const finished = status !== 'storing';
    const [row] = await this.db
      .update(dataImports)
      .set({
        status,
        updatedAt: new Date(),
        ...(finished
          ? { finishedAt: new Date(), leaseOwner: null, leaseUntil: null }
          : { leaseUntil: leaseUntil(leaseMs) }),
      })
      .where(and(held(id, owner), eq(dataImports.status, 'receiving')))
      .returning();
    return row ?? null;
  }

  /** An import whose upload failed: gone with its staged rows (nothing of it was stored). */
  async delete(id: string): Promise<void> {
    await this.db.delete(dataImports).where(eq(dataImports.id, id));
  }

  /** Drops the staged valid rows (after a refusal of all-or-nothing, a cancel); refusals stay. */
  async dropValidRows(id: string): Promise<void> {
    await this.db
      .delete(dataImportRows)
      .where(and(eq(dataImportRows.importId, id), isNotNull(dataImportRows.data)));
  }

  /**
   * Takes one unfinished import whose lease expired (its instance died or stopped), or null: a
   * `storing` one to resume, a `receiving` one to fail (its upload was cut off with its instance).
   */
  async claimAbandoned(owner: string, leaseMs: number): Promise<ImportRow | null> {
    const [row] = await this.db
      .update(dataImports)
      .set({ leaseOwner: owner, leaseUntil: leaseUntil(leaseMs) })
      .where(oldestAbandoned(dataImports, sql`status in ('receiving', 'storing')`))
      .returning();
    return row ?? null;
  }

  /**
   * The staged valid rows with numbers in `rows` (`(after, through]`; all when null), as the bulk
   * insert takes them: deleted as they are read, so a row moves once even if two instances store
   * the same import at once, and a crash before the commit leaves them staged. Nothing once the
   * import is no longer `storing` (cancelled). By number ranges, not "the first n left": the rows
   * stored before are dead tuples until a vacuum, and every batch would walk over them again.
   */
  takeValidRows(id: string, rows: { after: number; through: number } | null): SQL {
    const range =
      rows === null ? sql`` : sql`and row_number > ${rows.after} and row_number <= ${rows.through}`;
    return sql`delete from ${dataImportRows}
      where import_id = ${id}::uuid and data is not null ${range}
        and exists (select 1 from ${dataImports} where id = ${id}::uuid and status = 'storing')
      returning row_number, data, computed_results`;
  }

  /** The number of the first valid row still staged (where storing resumes); null when none is. */
  async firstValidRow(id: string): Promise<number | null> {
    const [row] = await this.db
      .select({ first: sql<number | null>`min(${dataImportRows.rowNumber})` })
      .from(dataImportRows)
      .where(and(eq(dataImportRows.importId, id), isNotNull(dataImportRows.data)));
    return row?.first === null || row?.first === undefined ? null : Number(row.first);
  }

  async statusOf(id: string): Promise<string | null> {
    const [row] = await this.db
      .select({ status: dataImports.status })
      .from(dataImports)
      .where(eq(dataImports.id, id))
      .limit(1);
    return row?.status ?? null;
  }

  /** The count of a storing batch, with the lease renewed: `inserted` is the bulk insert's count. */
  countStored(id: string, leaseMs: number): (inserted: SQL) => SQL {
    return (inserted) => sql`update ${dataImports} set rows_stored = rows_stored + ${inserted},
      lease_until = ${leaseUntil(leaseMs)}, updated_at = now() where id = ${id}::uuid`;
  }

  async finish(
    id: string,
    owner: string,
    status: ImportStatus,
    error: Record<string, unknown> | null = null,
  ): Promise<void> {
    await this.db
      .update(dataImports)
      .set({
        status,
        error,
        finishedAt: new Date(),
        updatedAt: new Date(),
        leaseOwner: null,
        leaseUntil: null,
      })
      .where(and(held(id, owner), inArray(dataImports.status, ['receiving', 'storing'])));
  }

  /** Cancels an unfinished import; null when it had finished. */
  async cancel(id: string): Promise<ImportRow | null> {
    const [row] = await this.db
      .update(dataImports)
      .set({
        status: 'cancelled',
        finishedAt: new Date(),
        updatedAt: new Date(),
        leaseOwner: null,
        leaseUntil: null,
      })
      .where(and(eq(dataImports.id, id), inArray(dataImports.status, ['receiving', 'storing'])))
      .returning();
    return row ?? null;
  }

  /** Refusals in row order, flattened, from after row `afterRow`: up to `limit` rows' worth. */
  async refusals(id: string, afterRow: number, limit: number): Promise<Refusal[]> {
    const rows = await this.db
      .select({ row: dataImportRows.rowNumber, refusals: dataImportRows.refusals })
      .from(dataImportRows)
      .where(
        and(
          eq(dataImportRows.importId, id),
          isNotNull(dataImportRows.refusals),
          sql`${dataImportRows.rowNumber} > ${afterRow}`,
        ),
      )
      .orderBy(dataImportRows.rowNumber)
      .limit(limit);
    return rows.flatMap((row) => (row.refusals ?? []).map((refusal) => ({ row: row.row, ...refusal })));
  }
}
