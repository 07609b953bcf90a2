import { Injectable } from '@nestjs/common';
import type { ValidateFunction } from 'ajv';
import { AppError, type FieldError } from '../common/errors/app-error';
import type { Locale } from '../common/i18n/locale';
import { Translator } from '../common/i18n/translator.service';
import type { ValidationRuleDefinition } from '../database/schema/form-configs.table';
import type { FieldResult, FormDefinition, ValidationOutcome } from './form-definition';
import { attachmentDeclarationProblems } from './attachment-fields';
import { compileSchema, schemaDefinitionErrors, schemaErrors } from './json-schema';
import { draftSchemaOf } from './draft-schema';
import {
  evaluateLogic,
  LogicBudget,
  LogicEvaluationFailed,
  LogicLimitExceeded,
  LOGIC_LIMITS,
  logicProblem,
} from './logic';

interface CompiledForm {
  schema: ValidateFunction | null;
  rules: ValidationRuleDefinition[];
  computed: { field: string; expression: unknown }[];
  /** Fields named by the schema's top-level properties or by a rule. */
  fields: string[];
}

const CACHE_SIZE = 500;

/**
 * Validates submitted data in sequential mode: JSON Schema (every error collected), then each
 * validation rule in order, then each computed rule in order. Rules see the submitted data; a
 * computed rule also sees the values computed before it (they overlay the data under their field).
 */
@Injectable()
export class FormValidator {
  private readonly compiled = new Map<string, CompiledForm>();
  /** The draft schemas (draftSchemaOf), compiled once per configuration version like the full ones. */
  private readonly compiledDrafts = new Map<string, ValidateFunction | null>();

  constructor(private readonly translator: Translator) {}

  /** Throws a 422 listing every problem when the schema does not compile or a rule is not valid JSONLogic. */
  assertDefinitionIsValid(definition: FormDefinition): void {
    const problems: { field: string; rule: string; message: string }[] = [];
    if (definition.schema) {
      const schemaProblems = schemaDefinitionErrors(definition.schema);
      problems.push(...schemaProblems);
      if (schemaProblems.length === 0) problems.push(...attachmentDeclarationProblems(definition.schema));
      if (problems.length === 0) {
        try {
          compileSchema(definition.schema);
        } catch (error) {
          // Past the meta-schema, Ajv's own message names the problem (an unresolvable $ref, ...).
          problems.push({ field: 'schema', rule: 'jsonSchema', message: (error as Error).message });
        }
      }
    }
    (definition.validationRules ?? []).forEach((rule, index) => {
      const problem = logicProblem(rule.rule, `validationRules[${index}].rule`);
      if (problem)
        problems.push({ field: `validationRules[${index}].rule`, rule: 'jsonLogic', message: problem });
    });
    (definition.computedRules ?? []).forEach((rule, index) => {
      const problem = logicProblem(rule.expression, `computedRules[${index}].expression`);
      if (problem)
        problems.push({ field: `computedRules[${index}].expression`, rule: 'jsonLogic', message: problem });
    });
    if (problems.length > 0) throw new AppError('VALIDATION_FAILED', { validationErrors: problems });
  }

  validate(definition: FormDefinition, data: Record<string, unknown>, locale: Locale): ValidationOutcome {
    const form = this.compile(definition);
    const validationErrors: FieldError[] = [];

    if (form.schema && !form.schema(data)) validationErrors.push(...schemaErrors(form.schema, locale));

    const budget = new LogicBudget();
    for (const rule of form.rules) {
      if (!truthy(evaluate(rule.rule, data, budget))) {
        validationErrors.push({
          field: rule.field ?? rule.name,
          rule: rule.name,
          message: this.translator.translateMessage(rule.message, locale),
        });
      }
    }

    const computedResults: Record<string, unknown> = {};
    if (form.computed.length > 0) {
      const scope: Record<string, unknown> = { ...data };
      for (const { field, expression } of form.computed) {
        const value = evaluate(expression, scope, budget);
        computedResults[field] = value === undefined ? null : value;
        scope[field] = computedResults[field];
      }
    }

    const fieldResults: Record<string, FieldResult> = {};
    for (const field of form.fields) fieldResults[field] = { valid: true, errors: [] };
    for (const error of validationErrors) {
      const result = (fieldResults[error.field] ??= { valid: true, errors: [] });
      result.valid = false;
      result.errors.push(error.message);
    }
    return { valid: validationErrors.length === 0, validationErrors, fieldResults, computedResults };
  }

  /**
   * A draft's check (README "Drafts"): the schema without what demands presence (draftSchemaOf),
   * every error collected; no validation rule and no computed value is run.
   */
  validateDraft(
    definition: FormDefinition,
    data: Record<string, unknown>,
    locale: Locale,
  ): ValidationOutcome {
    const key = cacheKeyOf(definition);
    let schema = key ? this.compiledDrafts.get(key) : undefined;
    if (schema === undefined) {
      schema = definition.schema ? compileSchema(draftSchemaOf(definition.schema)) : null;
      if (key) remember(this.compiledDrafts, key, schema);
    } else touch(this.compiledDrafts, key!, schema);
    const validationErrors = schema && !schema(data) ? schemaErrors(schema, locale) : [];
    const fieldResults: Record<string, FieldResult> = {};
    for (const field of this.compile(definition).fields) fieldResults[field] = { valid: true, errors: [] };
    for (const error of validationErrors) {
      const result = (fieldResults[error.field] ??= { valid: true, errors: [] });
      result.valid = false;
      result.errors.push(error.message);
    }
    return { valid: validationErrors.length === 0, validationErrors, fieldResults, computedResults: {} };
  }

  private compile(definition: FormDefinition): CompiledForm {
    const key = cacheKeyOf(definition);
    const cached = key ? this.compiled.get(key) : undefined;
    if (cached) {
      touch(this.compiled, key!, cached);
      return cached;
    }
    const schemaFields = Object.keys(
      (definition.schema?.properties as Record<string, unknown> | undefined) ?? {},
    );
    const rules = definition.validationRules ?? [];
    const form: CompiledForm = {
      schema: definition.schema ? compileSchema(definition.schema) : null,
      rules,
      computed: (definition.computedRules ?? []).map((rule) => ({
        field: rule.field,
        expression: rule.expression,
      })),
      fields: [...new Set([...schemaFields, ...rules.map((rule) => rule.field ?? rule.name)])],
    };
    if (key) remember(this.compiled, key, form);
    return form;
  }
}

/** A stored configuration's cache key: its id at its last change; none for one not stored. */
function cacheKeyOf(definition: FormDefinition): string | null {
  return definition.id ? `${definition.id}:${definition.updatedAt?.getTime() ?? 0}` : null;
}

/** Refreshes an entry's position so the map evicts the least recently used form. */
function touch<T>(cache: Map<string, T>, key: string, value: T): void {
  cache.delete(key);
  cache.set(key, value);
}

function remember<T>(cache: Map<string, T>, key: string, value: T): void {
  cache.set(key, value);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
}

/**
 * One rule on the data: a rule that cannot be evaluated on it yields undefined (a failed validation
 * rule, a null computed value); a submission that exceeds an evaluation limit is refused as a whole.
 */
function evaluate(rule: unknown, data: Record<string, unknown>, budget: LogicBudget): unknown {
  try {
    return evaluateLogic(rule, data, budget);
  } catch (error) {
    if (error instanceof LogicLimitExceeded) {
      throw new AppError('RULE_LIMIT_EXCEEDED', {
        params: { limit: LOGIC_LIMITS[error.limit] },
        details: { limit: error.limit, value: LOGIC_LIMITS[error.limit] },
      });
    }
    if (error instanceof LogicEvaluationFailed) return undefined;
    throw error;
  }
}

/** JSONLogic truthiness: an empty array is false. */
function truthy(value: unknown): boolean {
  return Array.isArray(value) ? value.length > 0 : Boolean(value);
}
