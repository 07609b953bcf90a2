import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { LeasedWork } from '../common/lifecycle/leased-work';
import { RecordErasure } from '../data/record-erasure.service';
import { EventDispatcher } from '../events/event-dispatcher.service';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { ImportsService } from '../imports/imports.service';
import { UsersService } from '../users/users.service';
import { WebhookDeliveriesService } from '../webhooks/webhook-deliveries.service';
import { newInstanceName } from '../workflow/engine/queue/workflow-instance';
import { RunErasure } from '../workflow/runs/run-erasure.service';
import { ERASURE_STEPS, type ErasureStep } from './erasure-steps';
import { ErasuresRepository, type ErasureRow } from './erasures.repository';

/** How long an instance holds an erasure between two steps; a dead instance's erasure is taken over after it. */
export const ERASURE_LEASE_MS = 60_000;
/** How often every instance looks for an erasure whose instance died. */
const TAKE_OVER_EVERY_MS = 10_000;

/**
 * Works through erasures step by step (ERASURE_STEPS), recording each step done in the erasure's
 * row, so an erasure whose instance died or stopped is taken over by any instance once its lease
 * expired (and at start) and goes on from the step it was in. Each step calls the owning feature's
 * service; none touches another feature's table.
 */
@Injectable()
export class ErasureProcessor extends LeasedWork<ErasureRow> implements OnApplicationBootstrap {
  private readonly instance = newInstanceName();

  constructor(
    private readonly erasures: ErasuresRepository,
    private readonly records: RecordErasure,
    private readonly events: EventDispatcher,
    private readonly webhooks: WebhookDeliveriesService,
    private readonly runs: RunErasure,
    private readonly idempotency: IdempotencyService,
    private readonly imports: ImportsService,
    private readonly users: UsersService,
  ) {
    super('erasure');
  }

  /** The name this instance holds erasures under (the accepting request stores it as the first owner). */
  get owner(): string {
    return this.instance;
  }

  onApplicationBootstrap(): void {
    void this.takeOver();
    this.takeOverEvery(TAKE_OVER_EVERY_MS);
  }

  /** Works through an erasure this instance holds, in the background. */
  start(erasure: ErasureRow): void {
    void this.startWork(erasure);
  }

  /** Takes over one erasure whose instance died (its lease expired) and works through it; whether one was found. */
  async takeOver(): Promise<boolean> {
    return (await this.claimAndStart()) !== null;
  }

  protected claimAbandoned(): Promise<ErasureRow | null> {
    return this.erasures.claimAbandoned(this.instance, ERASURE_LEASE_MS);
  }

  protected async process(erasure: ErasureRow): Promise<void> {
    for (let step = erasure.nextStep; step < ERASURE_STEPS.length; step++) {
      if (this.stopping) return;
      const removed = await this.run(ERASURE_STEPS[step], erasure);
      const last = step === ERASURE_STEPS.length - 1;
      // Lost: another instance took the erasure over (this one was too slow); it goes on from there.
      if (
        !(await this.erasures.completeStep(erasure.id, this.instance, step, removed, last, ERASURE_LEASE_MS))
      )
        return;
    }
    this.logger.log(`erasure ${erasure.id} done`);
  }

  /** One step; what it removed, per kind. */
  private async run(step: ErasureStep, erasure: ErasureRow): Promise<Record<string, number>> {
    const { recordIds, runIds } = erasure;
    const userId = erasure.kind === 'user' ? erasure.subject.userId : null;
    switch (step) {
      case 'records':
        return { records: await this.records.eraseRecords(recordIds) };
      case 'events':
        return { pendingEvents: await this.events.dropEventsAboutRecords(recordIds) };
      case 'history':
        return { historyEntries: await this.records.eraseHistoryOf(recordIds) };
      case 'webhooks':
        return { webhookDeliveries: await this.webhooks.eraseAboutRecords(recordIds) };
      case 'runs':
        return this.runs.eraseRuns(runIds);
      case 'mail': {
        const email = userId ? (await this.users.findById(userId))?.email : undefined;
        return email ? { outboxMail: await this.runs.dropPendingMailTo(email) } : {};
      }
      case 'idempotency':
        return { idempotentAnswers: await this.idempotency.eraseAnswersOf(userId, recordIds) };
      case 'imports':
        return userId ? { importRequests: await this.imports.eraseImporter(userId) } : {};
      case 'account':
        return userId ? { accounts: (await this.users.anonymizeErased(userId)) ? 1 : 0 } : {};
    }
  }
}
