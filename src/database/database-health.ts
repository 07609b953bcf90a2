import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { errorLine } from '../common/errors/cause-chain';
import { DatabaseClient } from './database-client';

/** While the database is away, how often it is pinged to notice that it is back. */
const PROBE_EVERY_MS = 1000;

/**
 * One log line when the database becomes unreachable and one when it answers again, however many
 * requests fail meanwhile. Told by the readiness probe and the exception filter (a request failed
 * with DATABASE_UNAVAILABLE); a pooled connection lost while idle is confirmed with a ping first,
 * since the pool replaces it by itself when the server is fine. While unavailable, one `select 1`
 * per second notices the recovery even when no request comes.
 */
@Injectable()
export class DatabaseHealth implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Database');
  private unavailableSince: number | null = null;
  /** When the database last answered again after being away; null if it never was away. */
  private backAt: number | null = null;
  private probe?: NodeJS.Timeout;
  private confirming = false;
  private stopping = false;

  constructor(private readonly database: DatabaseClient) {
    database.pool?.on('error', (error) => this.confirm(error));
  }

  get available(): boolean {
    return this.unavailableSince === null;
  }

  /** Available, and for at least `ms` since it last came back from being away. */
  settledFor(ms: number, now = Date.now()): boolean {
    return this.available && (this.backAt === null || now - this.backAt >= ms);
  }

  /** A query failed because the database cannot be reached. */
  unavailable(cause: unknown): void {
    if (this.unavailableSince !== null || this.stopping) return;
    this.unavailableSince = Date.now();
    this.logger.warn({
      msg: `Database is unavailable (${innermost(cause)}): requests that need it answer 503 DATABASE_UNAVAILABLE, readiness fails, workflow writes are retried for WORKFLOW_DB_RETRY_MS and queued runs wait`,
      dependency: 'database',
      driver: this.database.driver,
      code: 'DATABASE_UNAVAILABLE',
    });
    this.probe = setInterval(() => void this.check(), PROBE_EVERY_MS);
    this.probe.unref();
  }

  /** A query succeeded: one line if the database was away. */
  answered(): void {
    if (this.unavailableSince === null) return;
    this.backAt = Date.now();
    const downForMs = this.backAt - this.unavailableSince;
    this.unavailableSince = null;
    clearInterval(this.probe);
    this.logger.log({
      msg: `Database is back after ${Math.round(downForMs / 1000)} s`,
      dependency: 'database',
      driver: this.database.driver,
      downForMs,
    });
  }

  beforeApplicationShutdown(): void {
    this.stopping = true;
    clearInterval(this.probe);
  }

  /** A connection was lost: unavailable only if the database does not answer a ping either. */
  private confirm(cause: unknown): void {
    if (this.unavailableSince !== null || this.confirming || this.stopping) return;
    this.confirming = true;
    this.database
      .ping()
      .catch(() => this.unavailable(cause))
      .finally(() => (this.confirming = false));
  }

  private async check(): Promise<void> {
    if (this.stopping) return;
    try {
      await this.database.ping();
      this.answered();
    } catch {
      // Still away: the line was written when it went.
    }
  }
}

/**
 * The innermost error as a log line (`connect ECONNREFUSED 127.0.0.1:5432 [ECONNREFUSED]`): the
 * outer ones of a failed query only say that it failed.
 */
function innermost(error: unknown): string {
  let current = error;
  for (let depth = 0; depth < 5 && current instanceof Error && current.cause !== undefined; depth++)
    current = current.cause;
  return current instanceof Error ? errorLine(current).split('\n')[0] : 'unreachable';
}
