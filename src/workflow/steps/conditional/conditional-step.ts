import { conditionMet } from '../../engine/model/condition';
import type { StepContext, StepOutcome, WorkflowStepHandler } from '../../sdk/step-handler';
import { WorkflowStep } from '../../sdk/workflow-step.decorator';
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
