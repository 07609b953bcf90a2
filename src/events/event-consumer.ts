import { applyDecorators, Injectable, SetMetadata } from '@nestjs/common';
import type { DomainEvent } from './domain-event';
import type { EventInterest } from './event-interest';

export const EVENT_CONSUMER = Symbol('event-consumer');

/**
 * Takes domain events after the change that caused them committed (webhook deliveries, triggered
 * workflow runs). Implement it in a provider marked `@EventConsumer('<name>')` in any module: the
 * dispatcher finds it at boot.
 */
export interface EventConsumer {
  /**
   * Takes a batch of events, in the order they were written. Must be idempotent on `event.id`: a
   * batch is handed out again when a dispatcher died before it could note that every consumer took
   * it. Throwing hands the whole batch out again later (with backoff), to every consumer.
   */
  consume(events: DomainEvent[]): Promise<void>;

  /**
   * The events this consumer takes now (read from its own store); changes write only events some
   * consumer wants. Without it, every event is wanted. Whoever stores a new need (a subscription, a
   * trigger) also declares it at once through `EventInterests.declare`, before storing it.
   */
  interests?(): Promise<EventInterest[]>;
}

/** Marks a provider as an event consumer; `name` appears in the log lines about it. */
export function EventConsumer(name: string): ClassDecorator {
  return applyDecorators(Injectable(), SetMetadata(EVENT_CONSUMER, name));
}
