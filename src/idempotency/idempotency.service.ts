import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { IdempotencyRepository, type IdempotencyScope } from './idempotency.repository';

const LIFETIME_MS = 24 * 60 * 60_000;
const WAIT_FOR_FIRST_MS = 30_000;
const POLL_MS = 50;
const KEY = /^[\x21-\x7e]{1,255}$/;

export interface IdempotentAnswer {
  status: number;
  body: unknown;
}

/**
 * `Idempotency-Key`: the first request with a key from a user on a route does the work and its
 * answer (status and body) is kept 24 h; the same key with the same body answers that again without
 * a second write, also while the first is still running (it waits for it); the same key with a
 * different body is a 422 `IDEMPOTENCY_KEY_REUSED`. A first request that fails frees the key. An
 * answer over IDEMPOTENCY_MAX_ANSWER_BYTES (as JSON) is not kept: the key still stops a second
 * write, and a repeat is a 409 `IDEMPOTENCY_ANSWER_NOT_KEPT` instead of the answer.
 */
@Injectable()
export class IdempotencyService {
  constructor(
    private readonly keys: IdempotencyRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Retention: drops the keys past their lifetime; how many went. */
  purgeExpired(): Promise<number> {
    return this.keys.deleteExpired();
  }

  /**
   * An erasure's (the erasure module, admin-checked there): the kept answers of the user (null:
   * none) and every kept answer naming one of these records go; how many.
   */
  eraseAnswersOf(userId: string | null, recordIds: string[]): Promise<number> {
    return this.keys.deleteOfUserOrNaming(userId, recordIds);
  }

  async run(
    scope: IdempotencyScope,
    body: unknown,
    work: () => Promise<IdempotentAnswer>,
  ): Promise<IdempotentAnswer> {
    if (!KEY.test(scope.key)) {
      throw new AppError('VALIDATION_FAILED', {
        validationErrors: [
          {
            field: 'Idempotency-Key',
            rule: 'format',
            message: 'the key must be 1 to 255 printable ASCII characters',
          },
        ],
      });
    }
    const bodyHash = createHash('sha256')
      .update(JSON.stringify(body ?? null))
      .digest('hex');
    const deadline = Date.now() + WAIT_FOR_FIRST_MS;
    for (;;) {
      if (await this.keys.claim(scope, bodyHash, new Date(Date.now() + LIFETIME_MS))) {
        try {
          const answer = await work();
          await this.keys.complete(scope, answer.status, this.keepable(answer.body));
          return answer;
        } catch (error) {
          await this.keys.release(scope);
          throw error;
        }
      }
      const existing = await this.keys.find(scope);
      if (existing && existing.expiresAt.getTime() < Date.now()) {
        // Only this key: the table as a whole is purged by IdempotencyRetention, off the request path.
        await this.keys.deleteIfExpired(scope);
        continue;
      }
      if (existing && existing.bodyHash !== bodyHash) throw new AppError('IDEMPOTENCY_KEY_REUSED');
      if (existing?.state === 'done')
        return { status: existing.responseStatus ?? 200, body: existing.responseBody };
      if (existing?.state === 'unkept')
        throw new AppError('IDEMPOTENCY_ANSWER_NOT_KEPT', {
          details: { status: existing.responseStatus, maxAnswerBytes: this.config.idempotencyMaxAnswerBytes },
        });
      if (Date.now() > deadline) throw new AppError('IDEMPOTENCY_KEY_IN_PROGRESS');
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** The body to keep, or undefined when its JSON is over the bound (then nothing of it is kept). */
  private keepable(body: unknown): unknown {
    const json = JSON.stringify(body ?? null);
    // Characters first: a string is never shorter in bytes, so most answers skip the byte count.
    if (json.length * 3 <= this.config.idempotencyMaxAnswerBytes) return body ?? null;
    return Buffer.byteLength(json) <= this.config.idempotencyMaxAnswerBytes ? (body ?? null) : undefined;
  }
}
