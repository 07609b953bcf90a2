import { Inject, Injectable } from '@nestjs/common';
import { AppError, type FieldError } from '../common/errors/app-error';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { conditionProblem } from './engine/condition';
import { StepRegistry } from './engine/step-registry.service';
import { stringsOf, templateProblems } from './engine/template';
import type { WorkflowConfigDto } from './dto/workflow-definition.dto';

/**
 * Checks what the body's DTO cannot: step names unique, step types registered, each step's config
 * against its type's config class, and every template and condition (paths, env allow-list).
 * Problems name the step: `config.steps[2].config.url`.
 */
@Injectable()
export class WorkflowDefinitionValidator {
  private readonly envAllowlist: ReadonlySet<string>;

  constructor(
    private readonly registry: StepRegistry,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.envAllowlist = new Set(config.workflowEnvAllowlist);
  }

  assertValid(definition: WorkflowConfigDto): void {
    const problems: FieldError[] = [];
    const seen = new Set<string>();
    definition.steps.forEach((step, index) => {
      const at = `config.steps[${index}]`;
      if (seen.has(step.name))
        problems.push({
          field: `${at}.name`,
          rule: 'unique',
          message: `the step name "${step.name}" is used twice`,
        });
      seen.add(step.name);
      if (!this.registry.get(step.type)) {
        problems.push({
          field: `${at}.type`,
          rule: 'stepType',
          message: `unknown step type "${step.type.slice(0, 100)}"; known: ${this.registry.types().join(', ')}`,
        });
        return;
      }
      problems.push(...this.registry.configProblems(step.type, step.config ?? {}, `${at}.config`));
      for (const [path, text] of stringsOf(step.config ?? {})) {
        for (const message of templateProblems(text, this.envAllowlist))
          problems.push({ field: `${at}.config.${path}`, rule: 'template', message });
      }
      if (step.condition !== undefined) {
        const problem = conditionProblem(step.condition);
        if (problem) problems.push({ field: `${at}.condition`, rule: 'condition', message: problem });
      }
    });
    if (problems.length > 0) throw new AppError('VALIDATION_FAILED', { validationErrors: problems });
  }
}
