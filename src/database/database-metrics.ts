import { Injectable } from '@nestjs/common';
import type { Counter } from 'prom-client';
import { Metrics } from '../common/metrics/metrics.service';
import { DatabaseClient } from './database-client';

/**
 * Pool gauges read at scrape time (in use, idle, waiting for a connection) and a counter of database
 * errors: a pooled connection lost while idle, and queries that failed a request (counted by the
 * exception filter through `countQueryError`).
 */
@Injectable()
export class DatabaseMetrics {
  private readonly errors: Counter<'kind'>;

  constructor(metrics: Metrics, database: DatabaseClient) {
    const pool = database.pool;
    metrics.gauge({
      name: 'db_pool_connections',
      help: 'Database pool connections by state (in_use, idle, waiting = requests waiting for one)',
      labelNames: ['state'],
      collect() {
        this.set({ state: 'in_use' }, pool ? pool.totalCount - pool.idleCount : 0);
        this.set({ state: 'idle' }, pool ? pool.idleCount : 0);
        this.set({ state: 'waiting' }, pool ? pool.waitingCount : 0);
      },
    });
    this.errors = metrics.counter({
      name: 'db_errors_total',
      help: 'Database errors: idle connections lost, and queries that failed a request',
      labelNames: ['kind'],
    });
    this.errors.inc({ kind: 'connection_lost' }, 0);
    this.errors.inc({ kind: 'query' }, 0);
    pool?.on('error', () => this.errors.inc({ kind: 'connection_lost' }));
  }

  countQueryError(): void {
    this.errors.inc({ kind: 'query' });
  }
}
