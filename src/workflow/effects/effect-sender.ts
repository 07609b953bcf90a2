import { applyDecorators, Injectable, SetMetadata } from '@nestjs/common';

export const EFFECT_KIND = Symbol('workflow-effect-kind');

/** An effect as the outbox hands it to its sender. */
export interface OutboxEffect {
  runId: string;
  stepIndex: number;
  effectIndex: number;
  kind: string;
  payload: Record<string, unknown>;
  /** 1 for the first delivery attempt. */
  attempt: number;
}

/**
 * The stable identity of an effect across resends: the same run, step and index always give the
 * same key, so a receiver can recognise a resend after a crash (a mail's Message-ID is built from it).
 */
export function effectKey(effect: Pick<OutboxEffect, 'runId' | 'stepIndex' | 'effectIndex'>): string {
  return `${effect.runId}.${effect.stepIndex}.${effect.effectIndex}`;
}

/**
 * Delivers effects of one kind (`mail`, later `webhook`). Implement it in a provider marked
 * `@EffectKind('<kind>')` and add the provider to any module: the outbox finds it at boot.
 */
export interface EffectSender {
  /**
   * Why a payload cannot be sent, or null. Asked when a step enqueues the effect, so a bad payload
   * fails that step instead of the delivery.
   */
  payloadProblem(payload: Record<string, unknown>): string | null;
  /**
   * Delivers the effect; resolves once the receiving side accepted it. Throw `EffectError.retryable`
   * for a failure another attempt may cure (retried with backoff within OUTBOX_RETRY_MAX_MS);
   * `EffectError.fatal` or anything else marks the effect failed.
   */
  send(effect: OutboxEffect): Promise<void>;
}

/**
 * What a sender throws when a delivery failed: a stable code and a short message (no secrets: it is
 * shown on the run record), and whether another attempt may succeed.
 */
export class EffectError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'EffectError';
  }

  static retryable(code: string, message: string): EffectError {
    return new EffectError(code, message, true);
  }

  static fatal(code: string, message: string): EffectError {
    return new EffectError(code, message, false);
  }
}

/** Marks a provider as the sender of one effect kind. */
export function EffectKind(kind: string): ClassDecorator {
  return applyDecorators(Injectable(), SetMetadata(EFFECT_KIND, kind));
}
