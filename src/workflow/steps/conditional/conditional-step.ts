import {
  conditionMet,
  type StepContext,
  type StepOutcome,
  type WorkflowStepHandler,
  WorkflowStep,
} from '../../sdk';
import { ConditionalStepConfig } from './conditional-step.config';

/** Evaluates a condition; later steps branch on `results.<name>.matched`. */
@WorkflowStep({
  type: 'conditional',
  config: ConditionalStepConfig,
  replayable: true,
  pure: true,
  // The condition is evaluated, not rendered: a path in it must stay a path.
  rawFields: ['condition'],
  description: 'Evaluates a condition; later steps branch on results.<name>.matched',
})
export class ConditionalStep implements WorkflowStepHandler<ConditionalStepConfig, { matched: boolean }> {
  execute(context: StepContext, config: ConditionalStepConfig): Promise<StepOutcome<{ matched: boolean }>> {
    return Promise.resolve({ result: { matched: conditionMet(config.condition, { ...context.scope }) } });
  }
}
