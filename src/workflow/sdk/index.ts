/**
 * The one import point for step authors (README "Adding a step type"): the decorator that registers
 * a step type, the handler contract and its context, outcome and errors, the test kit, and the
 * helpers the built-in steps share. Code under src/workflow/steps/ imports the engine only from
 * here (lint: no-restricted-imports).
 */
export { WORKFLOW_STEP, WorkflowStep, type WorkflowStepOptions } from './workflow-step.decorator';
export {
  PROTECTED_SCOPE_ENTRIES,
  type CompensationOutcome,
  type EffectRequest,
  type FormAccessNeed,
  type RenderOptions,
  type StepContext,
  type StepEffects,
  type StepOutcome,
  type StepSignal,
  type StepWait,
  type WorkflowScope,
  type WorkflowStepHandler,
} from './step-handler';
export { StepError, type StepErrorOptions } from './step-error';
export type { RunWriteHandle } from './run-write-handle';
export { runRecordFiles, StepFiles, type StepFile } from './step-files';
export { StepFilesModule } from './step-files.module';
export { createStepTestContext, type StepTestContext, type StepTestOptions } from './step-test-kit';

// Helpers of the built-in steps, for steps of the same kind.
export { containsSecret, envSecrets, redact, redactedExcerpt } from '../engine/model/redaction';
export { originOf, SecretOrigins, type SecretOriginRefusal } from '../engine/model/secret-origins';
export { templateParts, type TemplatePart } from '../engine/model/template';
export { conditionMet, conditionProblem } from '../engine/model/condition';
export { readSegments } from '../engine/model/context-path';
