import type { AttemptLog, StepDefinition, StepLog } from '../model/run-model';
import type { StepFailure } from './step-failure';

export function skippedLog(step: StepDefinition): StepLog {
  return { name: step.name, type: step.type, status: 'skipped', result: null, attempts: 0, durationMs: 0 };
}

export function failedLog(
  step: StepDefinition,
  failure: StepFailure,
  attempts: AttemptLog[],
  durationMs: number,
): StepLog {
  return {
    name: step.name,
    type: step.type,
    status: 'failed',
    result: failure.result ?? null,
    error: {
      code: failure.code,
      message: failure.message,
      ...(failure.details !== undefined ? { details: failure.details } : {}),
    },
    attempts: attempts.length,
    durationMs,
    attemptLog: attempts,
  };
}

export function succeededLog(
  step: StepDefinition,
  result: unknown,
  attempts: AttemptLog[],
  durationMs: number,
): StepLog {
  return {
    name: step.name,
    type: step.type,
    status: 'success',
    result: result ?? null,
    attempts: attempts.length,
    durationMs,
    attemptLog: attempts,
  };
}
