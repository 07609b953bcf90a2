/** One reading of the primary's WAL position. */
interface PrimarySample {
  at: number;
  position: bigint;
}

/**
 * How far behind the primary a replica is, in time, measured against the primary's own positions
 * (read at every poll) rather than the replica's view of itself: a replica cut off from the primary
 * believes it is current. A replica that has replayed the position the primary had at time t holds
 * every write committed before t, so its lag is the age of the newest such reading (0 when it has
 * replayed the newest one).
 */
export class PrimaryPositionHistory {
  private readonly samples: PrimarySample[] = [];

  /** `keepMs`: readings older than this are dropped (a replica further behind has an unknown lag). */
  constructor(private readonly keepMs: number) {}

  add(position: bigint, at = Date.now()): void {
    this.samples.push({ at, position });
    while (this.samples.length > 1 && this.samples[0].at < at - this.keepMs) this.samples.shift();
  }

  get newest(): bigint | null {
    return this.samples.at(-1)?.position ?? null;
  }

  /** Milliseconds behind; null when no kept reading has been replayed (further behind than `keepMs`). */
  lagOf(replayed: bigint, now = Date.now()): number | null {
    const newest = this.samples.at(-1);
    if (!newest) return null;
    if (replayed >= newest.position) return 0;
    for (let index = this.samples.length - 2; index >= 0; index--) {
      if (this.samples[index].position <= replayed) return Math.max(0, now - this.samples[index].at);
    }
    return null;
  }
}
