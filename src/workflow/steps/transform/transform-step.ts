import { isAllowedSegment } from '../../../common/validation/field-path';
import {
  readSegments,
  StepError,
  type StepContext,
  type StepOutcome,
  type WorkflowStepHandler,
  WorkflowStep,
} from '../../sdk';
import { readSourceObject } from '../source-path';
import { TransformStepConfig } from './transform-step.config';

/**
 * Builds a new object in which each target key holds the value of the named source field of
 * the input. Later steps read it as `results.<step name>` (a `save` with `source` set to it).
 */
@WorkflowStep({
  type: 'transform',
  config: TransformStepConfig,
  replayable: true,
  pure: true,
  description: 'Maps fields of the input (or another context object) to a new object',
})
export class TransformStep implements WorkflowStepHandler<TransformStepConfig, Record<string, unknown>> {
  execute(context: StepContext, config: TransformStepConfig): Promise<StepOutcome<Record<string, unknown>>> {
    const source = readSourceObject(context, config.source);
    const result: Record<string, unknown> = {};
    for (const [target, from] of Object.entries(config.mapping)) {
      const segments = typeof from === 'string' ? from.split('.') : [];
      if (!isAllowedSegment(target) || segments.length === 0 || !segments.every(isAllowedSegment))
        throw new StepError(`the mapping "${target.slice(0, 100)}" is not allowed`, {
          code: 'INVALID_MAPPING',
        });
      const value = readSegments(source, segments);
      result[target] = value === undefined ? null : value;
    }
    return Promise.resolve({ result });
  }
}
