import {
  IsDefined,
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { conditionProblem } from '../../sdk';

@ValidatorConstraint({ name: 'condition' })
class ConditionConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return conditionProblem(value) === null;
  }

  defaultMessage(args: ValidationArguments): string {
    return conditionProblem(args.value) ?? 'not a valid condition';
  }
}

export class ConditionalStepConfig {
  /** The same forms as a step's `condition`: a dotted path, `path.equals.value`, `!path`, or JSONLogic. */
  @IsDefined() @Validate(ConditionConstraint) condition: string | Record<string, unknown>;
}
