import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { causeChain } from '../../common/errors/cause-chain';
import { isDatabaseUnavailable } from '../../common/errors/database-unavailable';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { DatabaseHealth } from '../../database/database-health';
import { EffectError } from './effect-sender';
import { EffectRegistry } from './effect-registry.service';
import { WorkflowEffectsRepository, type ClaimedEffect } from './workflow-effects.repository';

/** The longest wait between two attempts of one effect. */
const MAX_BACKOFF_MS = 5 * 60_000;

/**
 * Sends the outbox: effects that runs committed to (their final write stored them) are claimed by
 * any instance, sent, and marked sent once the receiver accepted them. A failure another attempt may
 * cure is retried with exponential backoff (OUTBOX_RETRY_BASE_MS, doubling, at most 5 minutes apart)
 * until OUTBOX_RETRY_MAX_MS after the run committed; then, or on a refusal, the effect is `failed`
 * with its cause. A claim holds an effect for OUTBOX_LEASE_MS (longer than any SMTP timeout): a
 * sender that died after the receiver accepted, before it marked the effect sent, is replaced after
 * it, and the resend carries the same key (a mail's Message-ID) so the receiver can drop the copy. A run's own effects are sent right after its final write (`deliverForRun`); the
 * poll (OUTBOX_POLL_MS) takes everything else: retries, and effects of runs whose process died.
 */
@Injectable()
export class EffectDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(EffectDispatcher.name);
  private timer?: NodeJS.Timeout;
  private polling: Promise<void> | null = null;
  private stopping = false;
  /** Effect kinds whose receiver failed with a retryable error and has not accepted one since. */
  private readonly failingKinds = new Set<string>();

  constructor(
    private readonly effects: WorkflowEffectsRepository,
    private readonly registry: EffectRegistry,
    private readonly databaseHealth: DatabaseHealth,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.poll(), this.config.outboxPollMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.polling;
  }

  /** Sends whatever is due of one run (just committed); failures wait for the poll. */
  async deliverForRun(runId: string): Promise<void> {
    try {
      while (await this.claimAndDeliver(runId));
    } catch (error) {
      // The effects are stored: the poll sends them once the database answers again.
      this.logger.warn(`workflow run ${runId}: its effects wait for the outbox poll: ${causeChain(error)}`);
    }
  }

  /** One round of the poll: claims and sends due effects until none is left. */
  poll(): Promise<void> {
    if (this.polling || this.stopping) return this.polling ?? Promise.resolve();
    this.polling = (async () => {
      try {
        let delivered = true;
        while (delivered && !this.stopping) delivered = await this.claimAndDeliver();
      } catch (error) {
        // An unreachable database is one line (DatabaseHealth), not one per poll.
        if (isDatabaseUnavailable(error)) this.databaseHealth.unavailable(error);
        else this.logger.warn(`workflow outbox poll failed: ${causeChain(error)}`);
      } finally {
        this.polling = null;
      }
    })();
    return this.polling;
  }

  /**
   * Claims one due effect (of one run, or any) and sends it; false when none was due. One at a time:
   * a claim's lease (OUTBOX_LEASE_MS) then covers one send, not a batch sent one after another, so no
   * other instance takes an effect this one is still about to send.
   */
  private async claimAndDeliver(runId?: string): Promise<boolean> {
    const [effect] = await this.effects.claimDue(1, this.config.outboxLeaseMs, runId);
    if (!effect) return false;
    await this.deliverOne(effect);
    return true;
  }

  private async deliverOne(effect: ClaimedEffect): Promise<void> {
    const sender = this.registry.get(effect.kind);
    try {
      if (!sender)
        throw EffectError.fatal('UNKNOWN_EFFECT_KIND', `no sender for effects of kind "${effect.kind}"`);
      await sender.send({ ...effect, attempt: effect.attempts });
    } catch (error) {
      return this.recordFailure(effect, error);
    }
    this.receiverAnswered(effect.kind);
    await this.effects.markSent(effect);
  }

  private async recordFailure(effect: ClaimedEffect, error: unknown): Promise<void> {
    const cause =
      error instanceof EffectError
        ? { code: error.code, message: error.message }
        : { code: 'EFFECT_FAILED', message: 'the effect could not be carried out' };
    const where = `workflow run ${effect.runId}, step ${effect.stepName}, ${effect.kind} effect ${effect.effectIndex}`;
    const ids = {
      runId: effect.runId,
      step: effect.stepName,
      kind: effect.kind,
      effect: effect.effectIndex,
      attempt: effect.attempts,
      code: cause.code,
    };
    const delayMs = Math.min(this.config.outboxRetryBaseMs * 2 ** (effect.attempts - 1), MAX_BACKOFF_MS);
    const retryable = error instanceof EffectError && error.retryable;
    if (retryable) this.receiverFailing(effect.kind, cause);
    if (retryable && effect.ageMs + delayMs <= this.config.outboxRetryMaxMs) {
      this.logger.warn({
        msg: `${where}: attempt ${effect.attempts} failed (${cause.code}), next in ${delayMs} ms`,
        ...ids,
        retryInMs: delayMs,
      });
      return this.effects.scheduleRetry(effect, delayMs, cause);
    }
    this.logger.error({
      msg: `${where} undelivered, given up (${cause.code}): ${error instanceof EffectError ? cause.message : causeChain(error)}`,
      ...ids,
    });
    await this.effects.markFailed(effect, cause);
  }

  /**
   * A failure another attempt may cure (the receiver unreachable, a 4xx answer) means the receiver
   * of that kind is degraded (SMTP for mail): one line when that starts, not one per effect.
   */
  private receiverFailing(kind: string, cause: { code: string; message: string }): void {
    if (this.failingKinds.has(kind)) return;
    this.failingKinds.add(kind);
    this.logger.warn({
      msg: `${receiverOf(kind)} is failing (${cause.message}): ${kind} effects wait in the outbox and are retried`,
      kind,
      code: cause.code,
      dependency: receiverOf(kind),
    });
  }

  /** The receiver of that kind accepted an effect again: one line if it was failing. */
  private receiverAnswered(kind: string): void {
    if (!this.failingKinds.delete(kind)) return;
    this.logger.log({
      msg: `${receiverOf(kind)} accepts ${kind} effects again: the outbox sends what waited`,
      kind,
      dependency: receiverOf(kind),
    });
  }
}

/** Who receives effects of a kind, as an operator knows it. */
function receiverOf(kind: string): string {
  return kind === 'mail' ? 'SMTP' : `the ${kind} receiver`;
}
