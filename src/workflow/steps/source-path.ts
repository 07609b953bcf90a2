import { StepError } from '../sdk/step-error';
import type { StepContext } from '../sdk/step-handler';

/** The object a step works on: the context path in `source` (default `input`). */
export function readSourceObject(context: StepContext, source: string | undefined): Record<string, unknown> {
  const value = context.read(source ?? 'input');
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new StepError(`"${source ?? 'input'}" is not an object`, { code: 'INVALID_SOURCE' });
  return value as Record<string, unknown>;
}
