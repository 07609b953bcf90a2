import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
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
 * different body is a 422 `IDEMPOTENCY_KEY_REUSED`. A first request that fails frees the key.
 */
@Injectable()
export class IdempotencyService {
  constructor(private readonly keys: IdempotencyRepository) {}

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
          await this.keys.complete(scope, answer.status, answer.body);
          return answer;
        } catch (error) {
          await this.keys.release(scope);
          throw error;
        }
      }
      const existing = await this.keys.find(scope);
      if (existing && existing.expiresAt.getTime() < Date.now()) {
        await this.keys.deleteExpired();
        continue;
      }
      if (existing && existing.bodyHash !== bodyHash) throw new AppError('IDEMPOTENCY_KEY_REUSED');
      if (existing?.state === 'done')
        return { status: existing.responseStatus ?? 200, body: existing.responseBody };
      if (Date.now() > deadline) throw new AppError('IDEMPOTENCY_KEY_IN_PROGRESS');
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}
