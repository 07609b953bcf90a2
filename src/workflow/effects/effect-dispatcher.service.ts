import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { causeChain } from '../../common/errors/cause-chain';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { EffectError } from './effect-sender';
import { EffectRegistry } from './effect-registry.service';
import { WorkflowEffectsRepository, type ClaimedEffect } from './workflow-effects.repository';

const BATCH = 20;
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

  constructor(
    private readonly effects: WorkflowEffectsRepository,
    private readonly registry: EffectRegistry,
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
      await this.deliver(await this.effects.claimDue(BATCH, this.config.outboxLeaseMs, runId));
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
        for (;;) {
          const claimed = await this.effects.claimDue(BATCH, this.config.outboxLeaseMs);
          await this.deliver(claimed);
          if (claimed.length < BATCH || this.stopping) break;
        }
      } catch (error) {
        this.logger.warn(`workflow outbox poll failed: ${causeChain(error)}`);
      } finally {
        this.polling = null;
      }
    })();
    return this.polling;
  }

  private async deliver(claimed: ClaimedEffect[]): Promise<void> {
    for (const effect of claimed) await this.deliverOne(effect);
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
    await this.effects.markSent(effect);
  }

  private async recordFailure(effect: ClaimedEffect, error: unknown): Promise<void> {
    const cause =
      error instanceof EffectError
        ? { code: error.code, message: error.message }
        : { code: 'EFFECT_FAILED', message: 'the effect could not be carried out' };
    const where = `workflow run ${effect.runId}, step ${effect.stepName}, ${effect.kind} effect ${effect.effectIndex}`;
    const delayMs = Math.min(this.config.outboxRetryBaseMs * 2 ** (effect.attempts - 1), MAX_BACKOFF_MS);
    const retryable = error instanceof EffectError && error.retryable;
    if (retryable && effect.ageMs + delayMs <= this.config.outboxRetryMaxMs) {
      this.logger.warn(`${where}: attempt ${effect.attempts} failed (${cause.code}), next in ${delayMs} ms`);
      return this.effects.scheduleRetry(effect, delayMs, cause);
    }
    this.logger.warn(
      `${where} failed for good (${cause.code}): ${error instanceof EffectError ? cause.message : causeChain(error)}`,
    );
    await this.effects.markFailed(effect, cause);
  }
}
