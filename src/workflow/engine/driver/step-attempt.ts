import { AppError } from '../../../common/errors/app-error';
import { StepError } from '../../sdk/step-error';
import type { StepContext, StepOutcome } from '../../sdk/step-handler';
import { storableFailure, unstorableReason } from '../model/storable-value';
import type { RegisteredStep } from '../step-registry.service';
import { engineFailure, isUnexpected, toStepFailure, type StepFailure, type Translate } from './step-failure';

export type AttemptOutcome = { outcome: StepOutcome } | { failure: StepFailure; runTimedOut?: boolean };

/** The run's deadline ended an attempt (never leaves `attemptStep`). */
class RunTimedOut extends Error {}

/**
 * One call of a handler, bounded by the step's `timeoutMs` (a retryable TIMEOUT) and by what is left
 * of the run's time (then aborted, `runTimedOut`). A result the run could not store fails the
 * attempt (see storable-value). Whatever the handler threw becomes a failure (see toStepFailure);
 * `onUnexpected` hears of errors that are neither StepError nor AppError, for the log.
 */
export async function attemptStep(args: {
  /** The handler's context, with the attempt's signal (made when first read). */
  context: (signal: () => AbortSignal) => StepContext;
  registered: RegisteredStep;
  config: object;
  stepTimeoutMs: number | undefined;
  runLeftMs: number;
  runTimeout: () => StepFailure;
  translate: Translate;
  onUnexpected: (error: unknown) => void;
}): Promise<AttemptOutcome> {
  const { stepTimeoutMs, runLeftMs, translate } = args;
  // Made only for a handler that reads it (most never do): a controller costs a few microseconds.
  let controller: AbortController | undefined;
  const signal = () => (controller ??= new AbortController()).signal;
  const runEnds = runLeftMs < (stepTimeoutMs ?? Infinity);
  const limitMs = Math.min(stepTimeoutMs ?? Infinity, runLeftMs);
  let timer: NodeJS.Timeout | undefined;
  try {
    const execution = args.registered.handler.execute(args.context(signal), args.config);
    const outcome = Number.isFinite(limitMs)
      ? await Promise.race([
          execution,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              controller?.abort();
              reject(
                runEnds
                  ? new RunTimedOut()
                  : StepError.retryable(
                      'TIMEOUT',
                      translate(new AppError('TIMEOUT', { params: { timeoutMs: stepTimeoutMs } })),
                    ),
              );
            }, limitMs);
          }),
        ])
      : await execution;
    const problem = unstorableReason(outcome.result) ?? unstorableReason(outcome.provides);
    if (problem) return { failure: engineFailure('RESULT_NOT_STORABLE', translate, { params: { problem } }) };
    return { outcome };
  } catch (error) {
    if (error instanceof RunTimedOut) return { failure: args.runTimeout(), runTimedOut: true };
    if (isUnexpected(error)) args.onUnexpected(error);
    return { failure: storableFailure(toStepFailure(error, translate)) };
  } finally {
    if (timer) clearTimeout(timer);
  }
}
