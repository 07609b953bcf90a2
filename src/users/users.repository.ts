import { Inject, Injectable } from '@nestjs/common';
import { and, asc, count, eq, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database.types';
import type { Parametrized } from '../database/built-statement';
import { isUniqueViolation } from '../database/unique-violation';
import { users } from '../database/schema';

export type UserRow = typeof users.$inferSelect;
export type UserUpdate =
  | { outcome: 'updated'; user: UserRow }
  | { outcome: 'notFound' }
  | { outcome: 'lastAdmin' }
  | { outcome: 'emailTaken' };
export type NewUser = Pick<typeof users.$inferInsert, 'email' | 'name' | 'passwordHash' | 'role' | 'siteId'>;
/** What decides whether an account may act now: its state, role, site and token version. */
export type UserStanding = Pick<UserRow, 'id' | 'email' | 'role' | 'siteId' | 'isActive' | 'tokenVersion'>;

/** A standing as `standingExpression` returns it; null for no account (or anything else). */
export function standingFromJson(value: unknown): UserStanding | null {
  if (typeof value !== 'object' || value === null) return null;
  const { id, email, role, siteId, isActive, tokenVersion } = value as Record<string, unknown>;
  if (typeof id !== 'string' || typeof email !== 'string' || typeof role !== 'string') return null;
  if (typeof isActive !== 'boolean' || typeof tokenVersion !== 'number') return null;
  if (siteId !== null && typeof siteId !== 'string') return null;
  return { id, email, role, siteId, isActive, tokenVersion };
}

/** The standing expression's template (see standingExpression). */
const STANDING = sql`(select jsonb_build_object('id', id, 'email', email, 'role', role, 'siteId', site_id,
  'isActive', is_active, 'tokenVersion', token_version) from ${users} where id = ${sql.placeholder('standing_id')}::uuid)`;
const NO_STANDING: Parametrized = { template: sql`null::jsonb`, values: {} };

@Injectable()
export class UsersRepository {
  /** Built once: a workflow run reads its caller's standing before its effects (see findStanding). */
  private readonly standingStatement;

  constructor(@Inject(DATABASE) private readonly db: Database) {
    this.standingStatement = db
      .select({
        id: users.id,
        email: users.email,
        role: users.role,
        siteId: users.siteId,
        isActive: users.isActive,
        tokenVersion: users.tokenVersion,
      })
      .from(users)
      .where(eq(users.id, sql.placeholder('id')))
      .limit(1)
      .prepare('users_standing');
  }

  /**
   * The same standing as an expression (a jsonb object, SQL NULL for no such account) that another
   * module's statement returns, so a check reads it in that statement (see standingFromJson); null
   * stands for an id that cannot be an account's.
   */
  standingExpression(id: string | null): Parametrized {
    return id === null ? NO_STANDING : { template: STANDING, values: { standing_id: id } };
  }

  /** The account's standing as stored now (no hash, no profile): the read of every access re-check. */
  async findStanding(id: string): Promise<UserStanding | null> {
    const [row] = await this.standingStatement.execute({ id });
    return row ?? null;
  }

  async findById(id: string): Promise<UserRow | null> {
    const [row] = await this.db.select().from(users).where(eq(users.id, id)).limit(1);
    return row ?? null;
  }

  async findByEmail(email: string): Promise<UserRow | null> {
    const [row] = await this.db.select().from(users).where(eq(users.email, email)).limit(1);
    return row ?? null;
  }

  async listPage(limit: number, offset: number): Promise<{ rows: UserRow[]; total: number }> {
    const [rows, [{ total }]] = await Promise.all([
      this.db.select().from(users).orderBy(asc(users.createdAt), asc(users.id)).limit(limit).offset(offset),
      this.db.select({ total: count() }).from(users),
    ]);
    return { rows, total: Number(total) };
  }

  async anyWithRole(role: string): Promise<boolean> {
    return (
      (await this.db.select({ id: users.id }).from(users).where(eq(users.role, role)).limit(1)).length > 0
    );
  }

  /**
   * Applies the changes unless they would leave no active admin or the new e-mail is taken (the
   * unique index decides, so two concurrent changes to one e-mail give one success). Serialized by
   * an advisory lock so two concurrent demotions cannot both pass the admin check.
   */
  async updateKeepingAnAdmin(
    id: string,
    changes: Partial<Pick<UserRow, 'name' | 'email' | 'role' | 'isActive' | 'siteId'>>,
  ): Promise<UserUpdate> {
    return this.db
      .transaction(async (tx): Promise<UserUpdate> => {
        await tx.execute(sql`select pg_advisory_xact_lock(hashtext('users:admins'))`);
        const [updated] = await tx
          .update(users)
          .set({ ...changes, updatedAt: new Date() })
          .where(eq(users.id, id))
          .returning();
        if (!updated) return { outcome: 'notFound' };
        const [{ admins }] = await tx
          .select({ admins: count() })
          .from(users)
          .where(and(eq(users.role, 'admin'), eq(users.isActive, true)));
        // Undone by failing the transaction.
        if (Number(admins) === 0) throw new LastAdminError();
        return { outcome: 'updated', user: updated };
      })
      .catch((error: unknown): UserUpdate => {
        if (error instanceof LastAdminError) return { outcome: 'lastAdmin' };
        if (isUniqueViolation(error, 'users_email_unique')) return { outcome: 'emailTaken' };
        throw error;
      });
  }

  /**
   * The first admin, unless an admin exists by now: under the lock of the admin check, so instances
   * started together on an empty database seed one admin and none of them mistakes the other's
   * fresh admin for a taken e-mail. Null when the e-mail belongs to a non-admin.
   */
  async insertFirstAdmin(user: NewUser): Promise<UserRow | 'adminExists' | null> {
    return this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext('users:admins'))`);
      const [admin] = await tx.select({ id: users.id }).from(users).where(eq(users.role, 'admin')).limit(1);
      if (admin) return 'adminExists';
      const [row] = await tx
        .insert(users)
        .values(user)
        .onConflictDoNothing({ target: users.email })
        .returning();
      return row ?? null;
    });
  }

  /** Returns null when the e-mail is taken (the unique index decides, so concurrent registrations are safe). */
  async insertUnlessEmailTaken(user: NewUser): Promise<UserRow | null> {
    const [row] = await this.db
      .insert(users)
      .values(user)
      .onConflictDoNothing({ target: users.email })
      .returning();
    return row ?? null;
  }

  /**
   * An erased account: inactive, its e-mail and name replaced, a password nobody knows, every token
   * revoked, in one statement. Null when there is no such account.
   */
  async anonymize(
    id: string,
    replacement: Pick<UserRow, 'email' | 'name' | 'passwordHash'>,
  ): Promise<UserRow | null> {
    const [row] = await this.db
      .update(users)
      .set({
        ...replacement,
        isActive: false,
        tokenVersion: sql`${users.tokenVersion} + 1`,
        updatedAt: new Date(),
      })
      .where(eq(users.id, id))
      .returning();
    return row ?? null;
  }

  /** Sets a new password hash and revokes every earlier token in the same statement. */
  async replacePasswordAndRevokeTokens(id: string, passwordHash: string): Promise<UserRow | null> {
    const [row] = await this.db
      .update(users)
      .set({ passwordHash, tokenVersion: sql`${users.tokenVersion} + 1`, updatedAt: new Date() })
      .where(eq(users.id, id))
      .returning();
    return row ?? null;
  }
}

class LastAdminError extends Error {}
