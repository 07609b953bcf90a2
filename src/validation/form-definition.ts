import type { ComputedRuleDefinition, ValidationRuleDefinition } from '../database/schema/form-configs.table';

/** The parts of a configuration that validation reads. */
export interface FormDefinition {
  id?: string;
  updatedAt?: Date;
  schema?: Record<string, unknown> | null;
  validationRules?: ValidationRuleDefinition[];
  computedRules?: ComputedRuleDefinition[];
}

export interface FieldResult {
  valid: boolean;
  errors: string[];
}

export interface ValidationOutcome {
  valid: boolean;
  validationErrors: import('../common/errors/app-error').FieldError[];
  /** Per field named by the schema or a rule: whether it passed and its messages. */
  fieldResults: Record<string, FieldResult>;
  computedResults: Record<string, unknown>;
}
