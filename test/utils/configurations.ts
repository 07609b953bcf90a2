/**
 * Which of CI's configurations a suite runs in (README "Tests"). `npm test` runs embedded (PGlite)
 * unless TEST_DATABASE_URL names a PostgreSQL server.
 */

/** Suites that need the PostgreSQL server: skipped in the embedded run. */
export const onPostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;

/**
 * Suites that only ever use the embedded database (a DATA_DIR of their own, child processes on it),
 * whatever the configuration: they run in the embedded run and are skipped where they would only
 * repeat it (the PostgreSQL and PgBouncer runs).
 */
export const embeddedOnly = process.env.TEST_DATABASE_URL ? describe.skip : describe;

/**
 * Suites that start a PostgreSQL server (and a PgBouncer) of their own, to restart and stop it: they
 * run once, in the PostgreSQL run (where the server's binaries are installed), and are skipped in
 * the PgBouncer run, which would only repeat them.
 */
export const ownPostgresServer =
  process.env.TEST_DATABASE_URL && !process.env.TEST_PGBOUNCER_URL ? describe : describe.skip;

/**
 * Suites that run behind PgBouncer in transaction mode (TEST_PGBOUNCER_URL, in front of the server
 * of TEST_DATABASE_URL; `.ci/pgbouncer-start` starts one): the PgBouncer run only.
 */
export const behindPooler =
  process.env.TEST_PGBOUNCER_URL && process.env.TEST_DATABASE_URL ? describe : describe.skip;
