import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DomainEventsRepository } from './domain-events.repository';
import { EventDispatcher } from './event-dispatcher.service';
import { EventInterests } from './event-interests.service';
import { EventInterestsRepository } from './event-interests.repository';

/**
 * The domain events outbox and its dispatcher. Global, so any feature that writes events can nudge
 * the dispatcher (`EventDispatcher.dispatchSoon`) and any module can hold an `@EventConsumer`.
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [DomainEventsRepository, EventDispatcher, EventInterestsRepository, EventInterests],
  exports: [EventDispatcher, EventInterests],
})
export class EventsModule {}
