import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error';
import { isDatabaseUnavailable } from '../../common/errors/database-unavailable';
import type { ReadTarget } from './read-scope';
import { ReadReplicas } from './read-replicas';
import { ReplicaMetrics, type FallbackReason } from './replica-metrics';
import { formatWalPosition, parseWalPosition } from './wal-position';
import { WritePositions } from './write-positions';

/** After a write, the primary's WAL position; on a read, the position the client has seen. */
export const DATABASE_POSITION_HEADER = 'x-database-position';

/** A replica's failure that the same read on the primary would not meet (README "Read replicas"). */
function isReplicaFailure(error: unknown): boolean {
  if (isDatabaseUnavailable(error)) return true;
  for (let current: any = error, depth = 0; current && depth < 5; depth++, current = current.cause) {
    // The database not there (yet): a database created on the primary is not replayed yet.
    if (current.code === '3D000') return true;
    // Cancelled because replaying the primary's changes needed what the query read.
    if (current.code === '40001' && /conflict with recovery/i.test(String(current.message))) return true;
    // A write reached the replica (read_only_sql_transaction): a routed route that writes is a bug,
    // but the primary can still answer it.
    if (current.code === '25006') return true;
  }
  return false;
}

/**
 * Where a routed read goes: a replica that has replayed the reader's last write (the position kept
 * for the user, and the one the client sent back, whichever is later), else the primary.
 */
@Injectable()
export class ReadRouting {
  constructor(
    private readonly replicas: ReadReplicas,
    private readonly positions: WritePositions,
    private readonly metrics: ReplicaMetrics,
  ) {}

  get enabled(): boolean {
    return this.replicas.enabled;
  }

  /** The header's position; a 400 INVALID_DATABASE_POSITION when it is not one. */
  echoedPosition(header: string | string[] | undefined): bigint | null {
    if (header === undefined) return null;
    const position = typeof header === 'string' ? parseWalPosition(header) : null;
    if (position === null) throw new AppError('INVALID_DATABASE_POSITION');
    return position;
  }

  /** The replica for a read of `userId` (null: anonymous), or null for the primary. */
  async targetFor(userId: string | null, echoed: bigint | null): Promise<ReadTarget | null> {
    if (!this.replicas.anyReady) return this.onPrimary('no_replica');
    const floor = await this.positions.floorOf(userId, () => this.replicas.primaryPosition());
    if (!floor.known) return this.onPrimary('position_unknown');
    const position =
      floor.position === null || (echoed !== null && echoed > floor.position) ? echoed : floor.position;
    const replica = this.replicas.pick(position);
    if (!replica) return this.onPrimary('behind_position');
    this.metrics.read(replica.target.name);
    return replica.target;
  }

  /**
   * Whether a read that failed on `target` is to be answered by the primary: the replica is then
   * left out until a poll finds it well.
   */
  retriesOnPrimary(target: ReadTarget, error: unknown): boolean {
    if (!isReplicaFailure(error)) return false;
    this.replicas.failed(target, error);
    this.metrics.fellBack('replica_failed');
    this.metrics.read('primary');
    return true;
  }

  /**
   * After a write: the primary's position, kept for `userId` and returned for the response header;
   * null when the primary does not answer (the write's own answer tells what happened).
   */
  async afterWrite(userId: string | null): Promise<string | null> {
    try {
      const position = await this.replicas.primaryPosition();
      if (userId !== null) await this.positions.remember(userId, position);
      return formatWalPosition(position);
    } catch {
      return null;
    }
  }

  private onPrimary(reason: FallbackReason): null {
    this.metrics.fellBack(reason);
    this.metrics.read('primary');
    return null;
  }
}
