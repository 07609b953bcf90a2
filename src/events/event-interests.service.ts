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
  constructor(
    private readonly interests: EventInterestsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Call before storing the subscription or trigger that needs these events. */
  declare(interests: EventInterest[]): Promise<void> {
    return this.interests.declare(interests);
  }

  /** Keeps exactly what the consumers want now (the dispatcher calls it at start and periodically). */
  reconcile(wanted: EventInterest[]): Promise<void> {
    return this.interests.reconcile(wanted, this.config.eventsInterestGraceMs);
  }

  list(): Promise<EventInterest[]> {
    return this.interests.list();
  }
}
