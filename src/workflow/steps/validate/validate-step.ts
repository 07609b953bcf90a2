import type { Locale } from '../../../common/i18n/locale';
import { FormAccessService } from '../../../permissions/form-access.service';
import { FormValidator } from '../../../validation/form-validator.service';
import { readSourceObject } from '../source-path';
import {
  StepError,
  type StepContext,
  type StepOutcome,
  type WorkflowStepHandler,
  WorkflowStep,
} from '../../sdk';
import { ValidateStepConfig } from './validate-step.config';

export interface ValidateStepResult {
  valid: boolean;
  validationErrors: unknown[];
  computedResults: Record<string, unknown>;
}

/**
 * Validates like `POST /api/data` does (schema, rules, computed values in sequential mode) without
 * storing anything; an invalid submission fails the step (a failed validation stops the run).
 */
@WorkflowStep({
  type: 'validate',
  config: ValidateStepConfig,
  replayable: true,
  pure: true,
  description: 'Validates the input against a configuration (schema, rules, computed values)',
})
export class ValidateStep implements WorkflowStepHandler<ValidateStepConfig, ValidateStepResult> {
  constructor(
    private readonly access: FormAccessService,
    private readonly validator: FormValidator,
  ) {}

  async execute(context: StepContext, config: ValidateStepConfig): Promise<StepOutcome<ValidateStepResult>> {
    const { config: form } = await this.access.require(
      context.ctx,
      config.configId ?? context.configId ?? '',
      'viewForm',
    );
    const data = readSourceObject(context, config.source);
    const locale: Locale = config.locale ?? context.ctx.locale;
    const outcome = this.validator.validate(form, data, locale);
    const result = {
      valid: outcome.valid,
      validationErrors: outcome.validationErrors,
      computedResults: outcome.computedResults,
    };
    if (!outcome.valid)
      throw StepError.fatal('DATA_VALIDATION_FAILED', 'the data is not valid', {
        details: result,
        // README: `results.<step>` holds `{valid, validationErrors, computedResults}` also when invalid.
        result,
        provides: { validationResult: { valid: false, validationErrors: outcome.validationErrors } },
      });
    return {
      result,
      provides: {
        validationResult: { valid: true, validationErrors: [] },
        computedResults: outcome.computedResults,
      },
    };
  }
}
