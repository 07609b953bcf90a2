import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { IdempotencyRepository, type IdempotencyRow, type IdempotencyScope } from './idempotency.repository';

const LIFETIME_MS = 24 * 60 * 60_000;
const WAIT_FOR_FIRST_MS = 30_000;
const POLL_MS = 50;
const KEY = /^[\x21-\x7e]{1,255}$/;
/** The body hash of a key whose first request has not read its body yet (never a SHA-256 in hex). */
const UNREAD_BODY = 'unread';

/**
 * Whether a key's body hash is a streamed body's: `unread` while its first request runs, then its
 * fingerprint, which is always prefixed with its kind (`multipart:`). A body parsed whole has a bare
 * SHA-256 in hex.
 */
function isStreamedFingerprint(bodyHash: string): boolean {
  return bodyHash === UNREAD_BODY || bodyHash.includes(':');
}

const expiry = () => new Date(Date.now() + LIFETIME_MS);
const pause = () => new Promise((resolve) => setTimeout(resolve, POLL_MS));

function assertKeyFormat(key: string): void {
  if (KEY.test(key)) return;
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
    assertKeyFormat(scope.key);
    const bodyHash = createHash('sha256')
      .update(JSON.stringify(body ?? null))
      .digest('hex');
    const deadline = Date.now() + WAIT_FOR_FIRST_MS;
    for (;;) {
      if (await this.keys.claim(scope, bodyHash, expiry())) return this.firstAnswer(scope, work);
      const existing = await this.keys.find(scope);
      if (existing && existing.expiresAt.getTime() < Date.now()) {
        // Only this key: the table as a whole is purged by IdempotencyRetention, off the request path.
        await this.keys.deleteIfExpired(scope);
        continue;
      }
      const settled = existing && this.settledAnswer(existing, bodyHash);
      if (settled) return settled;
      if (Date.now() > deadline) throw new AppError('IDEMPOTENCY_KEY_IN_PROGRESS');
      await pause();
    }
  }

  /**
   * `run` for a body that only the work reads (multipart: its files are stored as they arrive). The
   * first request claims the key before its body is known and keeps the body's fingerprint with its
   * answer (`work` gives both). A repeat under a key a JSON body holds is a 422 at once; any other
   * repeat reads its own body to the end (`fingerprintOf`, storing nothing), then answers as `run`
   * does: the first answer for the same body, 422 IDEMPOTENCY_KEY_REUSED for another. A repeat whose
   * first request fails while it waits cannot do the work itself (its body is read): 409
   * IDEMPOTENCY_KEY_IN_PROGRESS, for the client to send it again.
   */
  async runStreamed(
    scope: IdempotencyScope,
    work: () => Promise<IdempotentAnswer & { fingerprint: string }>,
    fingerprintOf: () => Promise<string>,
  ): Promise<IdempotentAnswer> {
    assertKeyFormat(scope.key);
    for (;;) {
      if (await this.keys.claim(scope, UNREAD_BODY, expiry())) return this.firstAnswer(scope, work);
      const existing = await this.keys.find(scope);
      if (!existing) continue; // freed since the claim: claim it again
      if (existing.expiresAt.getTime() >= Date.now()) {
        // A body parsed whole (JSON) holds the key: no streamed body can be the same one, so this
        // answers without reading the files.
        if (!isStreamedFingerprint(existing.bodyHash)) throw new AppError('IDEMPOTENCY_KEY_REUSED');
        break;
      }
      await this.keys.deleteIfExpired(scope);
    }
    const fingerprint = await fingerprintOf();
    const deadline = Date.now() + WAIT_FOR_FIRST_MS;
    for (;;) {
      const existing = await this.keys.find(scope);
      if (!existing || existing.expiresAt.getTime() < Date.now())
        throw new AppError('IDEMPOTENCY_KEY_IN_PROGRESS');
      const settled = existing.bodyHash !== UNREAD_BODY && this.settledAnswer(existing, fingerprint);
      if (settled) return settled;
      if (Date.now() > deadline) throw new AppError('IDEMPOTENCY_KEY_IN_PROGRESS');
      await pause();
    }
  }

  /** The claiming request's work; its answer kept (with its body's fingerprint, when given late), or the key freed. */
  private async firstAnswer(
    scope: IdempotencyScope,
    work: () => Promise<IdempotentAnswer & { fingerprint?: string }>,
  ): Promise<IdempotentAnswer> {
    try {
      const { fingerprint, ...answer } = await work();
      await this.keys.complete(scope, answer.status, this.keepable(answer.body), fingerprint);
      return answer;
    } catch (error) {
      await this.keys.release(scope);
      throw error;
    }
  }

  /** What a repeat answers, given the key's row; null while the first request is still running. */
  private settledAnswer(existing: IdempotencyRow, bodyHash: string): IdempotentAnswer | null {
    if (existing.bodyHash !== bodyHash) throw new AppError('IDEMPOTENCY_KEY_REUSED');
    if (existing.state === 'done')
      return { status: existing.responseStatus ?? 200, body: existing.responseBody };
    if (existing.state === 'unkept')
      throw new AppError('IDEMPOTENCY_ANSWER_NOT_KEPT', {
        details: { status: existing.responseStatus, maxAnswerBytes: this.config.idempotencyMaxAnswerBytes },
      });
    return null;
  }

  /** The body to keep, or undefined when its JSON is over the bound (then nothing of it is kept). */
  private keepable(body: unknown): unknown {
    const json = JSON.stringify(body ?? null);
    // Characters first: a string is never shorter in bytes, so most answers skip the byte count.
    if (json.length * 3 <= this.config.idempotencyMaxAnswerBytes) return body ?? null;
    return Buffer.byteLength(json) <= this.config.idempotencyMaxAnswerBytes ? (body ?? null) : undefined;
  }
}
