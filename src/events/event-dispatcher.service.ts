import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { causeChain } from '../common/errors/cause-chain';
import { isDatabaseUnavailable } from '../common/errors/database-unavailable';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DatabaseHealth } from '../database/database-health';
import { EVENT_TYPES, type DomainEvent } from './domain-event';
import { DomainEventsRepository, type ClaimedEvent } from './domain-events.repository';
import { EVENT_CONSUMER, type EventConsumer } from './event-consumer';
import type { EventInterest } from './event-interest';
import { EventInterests } from './event-interests.service';

/** Events handed to the consumers at once. */
const BATCH = 100;
/** The longest wait before a batch a consumer failed on is handed out again. */
const MAX_BACKOFF_MS = 60_000;

/**
 * Hands the events outbox to every event consumer: any instance claims a batch of due events
 * (oldest first), gives it to each consumer in turn and removes it once all of them took it. A
 * consumer that fails has the batch handed out again later, with backoff, to every consumer (they
 * are idempotent on the event's id). A batch is claimed for EVENTS_LEASE_MS, so a dispatcher that died
 * is replaced after it. Polled every EVENTS_POLL_MS; `dispatchSoon` is the nudge after a local
 * change, so events of this instance go out without waiting for the poll.
 */
@Injectable()
export class EventDispatcher implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(EventDispatcher.name);
  private readonly consumers: { name: string; consumer: EventConsumer }[] = [];
  private timer?: NodeJS.Timeout;
  private reconcileTimer?: NodeJS.Timeout;
  private dispatching: Promise<void> | null = null;
  private again = false;
  private stopping = false;

  constructor(
    private readonly events: DomainEventsRepository,
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
    private readonly databaseHealth: DatabaseHealth,
    private readonly interests: EventInterests,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    for (const { metatype, instance } of this.discovery.getProviders()) {
      if (!metatype || typeof metatype !== 'function' || !instance) continue;
      const name = this.reflector.get<string | undefined>(EVENT_CONSUMER, metatype);
      if (name) this.consumers.push({ name, consumer: instance as EventConsumer });
    }
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.dispatch(), this.config.eventsPollMs);
    this.timer.unref();
    void this.reconcileInterests();
    this.reconcileTimer = setInterval(
      () => void this.reconcileInterests(),
      Math.max(1000, this.config.eventsInterestGraceMs / 2),
    );
    this.reconcileTimer.unref();
  }

  /**
   * Brings the stored event interests to what the consumers want now (a consumer without
   * `interests` wants every event). Resolves when done; a failure is logged and left to the next
   * round, the stored interests then stay as they were (at worst wanting too much).
   */
  async reconcileInterests(): Promise<void> {
    try {
      const wanted: EventInterest[] = [];
      for (const { consumer } of this.consumers) {
        if (consumer.interests) wanted.push(...(await consumer.interests()));
        else wanted.push(...EVENT_TYPES.map((type) => ({ type, configId: null })));
      }
      await this.interests.reconcile(wanted);
    } catch (error) {
      if (isDatabaseUnavailable(error)) this.databaseHealth.unavailable(error);
      else this.logger.warn(`event interests not reconciled: ${causeChain(error)}`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    clearInterval(this.reconcileTimer);
    await this.dispatching;
  }

  /**
   * An erasure's (the erasure module, admin-checked there): events about these records that no
   * consumer took yet leave the outbox, so no webhook or trigger gets the record; how many.
   */
  dropEventsAboutRecords(recordIds: string[]): Promise<number> {
    return this.events.deleteAboutRecords(recordIds);
  }

  /**
   * Dispatches soon (a change of this instance just committed, maybe with events). Skipped while
   * nobody wants events: a claim per change would find nothing (the poll still looks).
   */
  dispatchSoon(): void {
    if (!this.interests.anyWanted) return;
    if (this.dispatching) this.again = true;
    else setImmediate(() => void this.dispatch());
  }

  /** One round: claims and hands out batches until none is due. Resolves when the round is over. */
  dispatch(): Promise<void> {
    if (this.dispatching || this.stopping) return this.dispatching ?? Promise.resolve();
    this.dispatching = (async () => {
      try {
        do {
          this.again = false;
          while (!this.stopping && (await this.dispatchBatch()));
        } while (this.again && !this.stopping);
      } catch (error) {
        if (isDatabaseUnavailable(error)) this.databaseHealth.unavailable(error);
        else this.logger.warn(`domain events dispatch failed: ${causeChain(error)}`);
      } finally {
        this.dispatching = null;
      }
    })();
    return this.dispatching;
  }

  /** Claims one batch and hands it to every consumer; false when nothing was due. */
  private async dispatchBatch(): Promise<boolean> {
    const batch = await this.events.claimDue(BATCH, this.config.eventsLeaseMs);
    if (batch.length === 0) return false;
    const ids = batch.map((event) => event.id);
    for (const { name, consumer } of this.consumers) {
      try {
        await consumer.consume(batch.map(withoutAttempts));
      } catch (error) {
        const attempts = Math.max(...batch.map((event) => event.attempts));
        const delayMs = Math.min(this.config.eventsRetryBaseMs * 2 ** (attempts - 1), MAX_BACKOFF_MS);
        this.logger.warn({
          msg: `event consumer ${name} failed on ${batch.length} events, handed out again in ${delayMs} ms: ${causeChain(error)}`,
          consumer: name,
          events: batch.length,
        });
        await this.events.postpone(ids, delayMs);
        return true;
      }
    }
    await this.events.remove(ids);
    return true;
  }
}

function withoutAttempts({ attempts: _attempts, ...event }: ClaimedEvent): DomainEvent {
  return event;
}
