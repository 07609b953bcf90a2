import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { EventInterest } from './event-interest';
import { EventInterestsRepository } from './event-interests.repository';

/**
 * Which events changes write: only those some consumer takes. A feature that is about to store
 * something needing events (a webhook subscription, a workflow trigger) declares them first, so no
 * change committed after the store misses its event; the dispatcher's reconciliation later drops
 * what nobody wants any more (after EVENTS_INTEREST_GRACE_MS).
 */
@Injectable()
export class EventInterests {
  /**
   * Whether any event was wanted at this instance's last look (its last reconciliation or
   * declaration; true until the first). Only spares the dispatcher's nudge after a change: events
   * written while another instance's new declaration is not known here go out with the next poll.
   */
  private wanted = true;

  constructor(
    private readonly interests: EventInterestsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Call before storing the subscription or trigger that needs these events. */
  async declare(interests: EventInterest[]): Promise<void> {
    await this.interests.declare(interests);
    if (interests.length > 0) this.wanted = true;
  }

  /** Keeps exactly what the consumers want now (the dispatcher calls it at start and periodically). */
  async reconcile(wanted: EventInterest[]): Promise<void> {
    await this.interests.reconcile(wanted, this.config.eventsInterestGraceMs);
    this.wanted = (await this.interests.list()).length > 0;
  }

  /** Whether changes may be writing events (see `wanted`). */
  get anyWanted(): boolean {
    return this.wanted;
  }

  list(): Promise<EventInterest[]> {
    return this.interests.list();
  }
}
