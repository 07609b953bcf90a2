import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { Database } from './database.types';
import { rowsOf } from './raw-rows';

/**
 * Applies the committed migrations that are not applied yet, in ONE transaction that first takes a
 * transaction-level advisory lock: instances started together on an empty database wait for the
 * first one instead of creating the same types at once (`pg_type_typname_nsp_index`), and the one
 * transaction keeps the lock and every statement on one server connection behind a pooler in
 * transaction mode. drizzle's own migrator creates its bookkeeping table outside its transaction,
 * so it cannot be wrapped; the table layout here is drizzle's (`drizzle.__drizzle_migrations`), so
 * databases migrated by either carry on.
 */
export async function applyMigrations(db: Database, migrationsFolder: string): Promise<number> {
  const migrations = readMigrationFiles({ migrationsFolder });
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('fdws:migrations'))`);
    await tx.execute(sql`create schema if not exists drizzle`);
    await tx.execute(sql`
      create table if not exists drizzle.__drizzle_migrations (
        id serial primary key,
        hash text not null,
        created_at bigint
      )`);
    const [last] = rowsOf(
      await tx.execute(
        sql`select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`,
      ),
    );
    const appliedUpTo = last ? Number(last.created_at) : -Infinity;
    let applied = 0;
    for (const migration of migrations) {
      if (migration.folderMillis <= appliedUpTo) continue;
      for (const statement of migration.sql) await tx.execute(sql.raw(statement));
      await tx.execute(
        sql`insert into drizzle.__drizzle_migrations (hash, created_at) values (${migration.hash}, ${migration.folderMillis})`,
      );
      applied++;
    }
    return applied;
  });
}

/** How many committed migrations the database lacks (all of them when it was never migrated). */
export async function pendingMigrations(db: Database, migrationsFolder: string): Promise<number> {
  const migrations = readMigrationFiles({ migrationsFolder });
  const [row] = rowsOf(
    await db.execute(sql`select to_regclass('drizzle.__drizzle_migrations') is not null as present`),
  );
  if (!row?.present) return migrations.length;
  const [last] = rowsOf(
    await db.execute(sql`select max(created_at) as created_at from drizzle.__drizzle_migrations`),
  );
  const appliedUpTo =
    last?.created_at === null || last?.created_at === undefined ? -Infinity : Number(last.created_at);
  return migrations.filter((migration) => migration.folderMillis > appliedUpTo).length;
}
