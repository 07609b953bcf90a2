import { retryPolicyOf } from './retry-policy';
import type { WorkflowDefinition } from '../model/run-model';
import type { StepRegistry } from '../step-registry.service';

/**
 * The step with an effect that the run's first write, carried by step `index`'s insert, may already
 * mark in flight, so that it needs no write of its own: the next step after `index`, when it is not
 * replayable and runs unconditionally, step `index` makes one attempt (no retry wait with the mark
 * stored), and every step between is pure and makes one attempt only (no I/O with an effect, no
 * wait). A resumed run that finds the mark re-runs the replayable steps up to it and reports it
 * interrupted, as it would have after a crash during the step; nothing is ever repeated. Null when
 * there is no such step: the step then writes its own mark before it starts.
 */
export function stepInFlightAhead(
  definition: WorkflowDefinition,
  index: number,
  registry: StepRegistry,
): number | null {
  const retries = (at: number) => retryPolicyOf(definition.retry, definition.steps[at].retry).maxAttempts > 1;
  if (retries(index)) return null;
  for (let next = index + 1; next < definition.steps.length; next++) {
    const step = definition.steps[next];
    const options = registry.get(step.type)?.options;
    if (!options) return null;
    if (!options.replayable) return step.condition === undefined ? next : null;
    if (!options.pure || retries(next)) return null;
  }
  return null;
}
