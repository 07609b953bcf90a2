import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { drizzle } from 'drizzle-orm/node-postgres';
import type { Pool } from 'pg';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { errorLine } from '../../common/errors/cause-chain';
import { DatabaseClient } from '../database-client';
import { createPostgresPool } from '../postgres-pool';
import * as schema from '../schema';
import type { ReadTarget } from './read-scope';
import { PrimaryPositionHistory } from './replica-lag';
import { parseWalPosition } from './wal-position';

/** A replica that does not answer its poll (or a connection) within this long is left out. */
const REPLICA_ANSWER_MS = 800;

/** Why a replica takes reads or not; each change is one log line. */
export type ReplicaStatus = 'starting' | 'ready' | 'lagging' | 'down' | 'promoted';

export interface Replica {
  readonly target: ReadTarget;
  status: ReplicaStatus;
  /** Its last replayed WAL position. */
  replayed: bigint | null;
  /** Milliseconds behind the primary at the last poll; null when unknown. */
  lagMs: number | null;
  polling: boolean;
}

/**
 * The replicas named by DATABASE_REPLICA_URLS and how far each has replayed. Every REPLICA_POLL_MS
 * one statement reads the primary's WAL position and one per replica reads its replayed position
 * and whether it is still in recovery: requests never ask a replica where it is. A replica takes
 * reads while it answers, is still a replica, and is at most REPLICA_MAX_LAG_MS behind.
 */
@Injectable()
export class ReadReplicas implements OnModuleInit, OnApplicationShutdown {
  readonly replicas: Replica[];
  private readonly logger = new Logger('ReadReplicas');
  private readonly history: PrimaryPositionHistory;
  private timer?: NodeJS.Timeout;
  private primaryPolling = false;
  private next = 0;
  private readonly listeners: ((replica: Replica, previous: ReplicaStatus) => void)[] = [];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly database: DatabaseClient,
  ) {
    // Embedded PGlite has no replicas (the configuration refuses them without DATABASE_URL); a
    // test handing in an embedded client gets none either.
    const urls = database.pool ? config.databaseReplicaUrls : [];
    this.history = new PrimaryPositionHistory(config.replicaMaxLagMs * 2 + config.replicaPollMs * 4);
    this.replicas = urls.map((url, index) => {
      const pool = createPostgresPool({
        url,
        max: config.databasePoolSize,
        preparedStatements: config.databasePreparedStatements,
        connectTimeoutMs: REPLICA_ANSWER_MS,
        keepAliveAfterMs: 10_000,
      });
      const target: ReadTarget = { name: `replica${index + 1}`, pool, db: drizzle(pool, { schema }) };
      return { target, status: 'starting', replayed: null, lagMs: null, polling: false };
    });
  }

  get enabled(): boolean {
    return this.replicas.length > 0;
  }

  /** Told of every change of a replica's status (metrics). */
  onStatusChange(listener: (replica: Replica, previous: ReplicaStatus) => void): void {
    this.listeners.push(listener);
  }

  onModuleInit(): void {
    if (!this.enabled) return;
    this.logger.log(
      `${this.replicas.length} read replica(s) configured: routed reads go to one that has replayed the reader's last write and is at most ${this.config.replicaMaxLagMs} ms behind`,
    );
    void this.poll();
    this.timer = setInterval(() => void this.poll(), this.config.replicaPollMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.replicas.map((replica) => replica.target.pool.end().catch(() => undefined)));
  }

  /**
   * A ready replica that has replayed at least `position` (round robin among them); null when none
   * has. `position` null: any ready replica.
   */
  pick(position: bigint | null): Replica | null {
    const count = this.replicas.length;
    for (let step = 0; step < count; step++) {
      const replica = this.replicas[(this.next + step) % count];
      if (replica.status !== 'ready' || replica.replayed === null) continue;
      if (position !== null && replica.replayed < position) continue;
      this.next = (this.next + step + 1) % count;
      return replica;
    }
    return null;
  }

  /** Whether any replica takes reads at all now. */
  get anyReady(): boolean {
    return this.replicas.some((replica) => replica.status === 'ready');
  }

  /** The primary's WAL position now: every write committed before this call is at or before it. */
  async primaryPosition(): Promise<bigint> {
    const result = await this.primaryPool().query<{ position: string }>(
      'select pg_current_wal_lsn()::text as position',
    );
    const position = parseWalPosition(result.rows[0].position);
    if (position === null) throw new Error(`unexpected WAL position ${result.rows[0].position}`);
    return position;
  }

  /** A request's query failed on the replica: it is left out until a poll finds it well again. */
  failed(target: ReadTarget, error: unknown): void {
    const replica = this.replicas.find((candidate) => candidate.target === target);
    if (replica) this.setStatus(replica, 'down', reasonOf(error));
  }

  private primaryPool(): Pool {
    if (!this.database.pool) throw new Error('read replicas need PostgreSQL (DATABASE_URL)');
    return this.database.pool;
  }

  private async poll(): Promise<void> {
    if (!this.primaryPolling) {
      this.primaryPolling = true;
      // The primary away: no new reading, so every replica's lag grows until it is left out too.
      await this.primaryPosition()
        .then((position) => this.history.add(position))
        .catch(() => undefined)
        .finally(() => (this.primaryPolling = false));
    }
    await Promise.all(this.replicas.map((replica) => this.pollReplica(replica)));
  }

  private async pollReplica(replica: Replica): Promise<void> {
    if (replica.polling) return;
    replica.polling = true;
    try {
      const result = await withinTime(
        replica.target.pool.query<{ recovering: boolean; replayed: string | null }>(
          'select pg_is_in_recovery() as recovering, pg_last_wal_replay_lsn()::text as replayed',
        ),
        REPLICA_ANSWER_MS,
      );
      const row = result.rows[0];
      if (!row.recovering) {
        this.setStatus(replica, 'promoted', 'it is no longer in recovery (promoted to a primary)');
        return;
      }
      replica.replayed = row.replayed === null ? null : parseWalPosition(row.replayed);
      replica.lagMs = replica.replayed === null ? null : this.history.lagOf(replica.replayed);
      if (replica.lagMs === null || replica.lagMs > this.config.replicaMaxLagMs) {
        const behind = replica.lagMs === null ? 'an unknown time' : `${replica.lagMs} ms`;
        this.setStatus(replica, 'lagging', `${behind} behind the primary`);
      } else {
        this.setStatus(replica, 'ready', `${replica.lagMs} ms behind the primary`);
      }
    } catch (error) {
      replica.lagMs = null;
      this.setStatus(replica, 'down', reasonOf(error));
    } finally {
      replica.polling = false;
    }
  }

  private setStatus(replica: Replica, status: ReplicaStatus, reason: string): void {
    const previous = replica.status;
    if (previous === status) return;
    replica.status = status;
    const name = replica.target.name;
    const line = { replica: name, status, previous, lagMs: replica.lagMs };
    if (status === 'ready') {
      this.logger.log({ ...line, msg: `Read replica ${name} takes reads (${reason})` });
    } else {
      this.logger.warn({
        ...line,
        msg: `Read replica ${name} is ${status} (${reason}): its reads go to another replica or the primary`,
      });
    }
    for (const listener of this.listeners) listener(replica, previous);
  }
}

function withinTime<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  work.catch(() => undefined);
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? errorLine(error).split('\n')[0] : 'unreachable';
}
