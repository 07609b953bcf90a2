import { Injectable } from '@nestjs/common';
import type { Counter } from 'prom-client';
import { Metrics } from '../../common/metrics/metrics.service';
import { ReadReplicas } from './read-replicas';

/** Why a routed read went to the primary. */
export type FallbackReason = 'no_replica' | 'behind_position' | 'position_unknown' | 'replica_failed';

/**
 * Read replicas' metrics: lag and availability per replica (read at scrape time from the last poll),
 * routed reads by the database that answered them, and reads that fell back to the primary by reason.
 */
@Injectable()
export class ReplicaMetrics {
  private readonly reads: Counter<'target'>;
  private readonly fallbacks: Counter<'reason'>;

  constructor(metrics: Metrics, replicas: ReadReplicas) {
    const all = replicas.replicas;
    metrics.gauge({
      name: 'db_replica_lag_seconds',
      help: 'How far each read replica is behind the primary at its last poll (absent while unknown)',
      labelNames: ['replica'],
      collect() {
        this.reset();
        for (const replica of all)
          if (replica.lagMs !== null) this.set({ replica: replica.target.name }, replica.lagMs / 1000);
      },
    });
    metrics.gauge({
      name: 'db_replica_up',
      help: 'Whether each read replica takes reads (1) or is left out: down, promoted or lagging (0)',
      labelNames: ['replica'],
      collect() {
        for (const replica of all)
          this.set({ replica: replica.target.name }, replica.status === 'ready' ? 1 : 0);
      },
    });
    this.reads = metrics.counter({
      name: 'db_routed_reads_total',
      help: 'Reads of the routes that may use a replica, by the database that answered (primary or a replica)',
      labelNames: ['target'],
    });
    this.fallbacks = metrics.counter({
      name: 'db_replica_fallbacks_total',
      help: 'Routed reads sent to the primary, by reason',
      labelNames: ['reason'],
    });
    if (all.length > 0) {
      this.reads.inc({ target: 'primary' }, 0);
      for (const replica of all) this.reads.inc({ target: replica.target.name }, 0);
      for (const reason of ['no_replica', 'behind_position', 'position_unknown', 'replica_failed'])
        this.fallbacks.inc({ reason }, 0);
    }
  }

  read(target: string): void {
    this.reads.inc({ target });
  }

  fellBack(reason: FallbackReason): void {
    this.fallbacks.inc({ reason });
  }
}
