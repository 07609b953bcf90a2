import { applyDecorators, Injectable, SetMetadata, type Type } from '@nestjs/common';

export const WORKFLOW_STEP = Symbol('workflow-step');

export interface WorkflowStepOptions {
  /** The `type` of a step in a definition; unique across the application (a duplicate fails the boot). */
  type: string;
  /** A class-validator class that a step's `config` must satisfy when a definition is saved. */
  config: Type<object>;
  /**
   * Whether the step may run again after a crash interrupted it. Steps with effects outside the
   * database (mail, HTTP) are not.
   */
  replayable: boolean;
  /**
   * Whether the step has no effect outside the run (it only reads and computes): a dry run executes
   * such steps and only renders the others. Default false.
   */
  pure?: boolean;
  /**
   * Whether the step's only effect is an insert that carries `context.carriedWrite`
   * (database/carried-write), as `save`'s record insert does: a run not stored yet is then stored
   * in that insert's statement instead of in a statement of its own before the step. Default false.
   */
  carriesRunWrite?: boolean;
  /** Config paths (`email.template`, `compensate`) the runner leaves unrendered for the handler. */
  rawFields?: string[];
  /**
   * Config paths holding free JSON that the config class checks only at the top (an object stays an
   * object whatever the strings inside it render to), as an api step's `payload`. A config whose
   * templates are all inside these (or in `rawFields`) is valid after rendering exactly when it is
   * before, so it is checked once per definition version instead of after every rendering.
   */
  freeFields?: string[];
  /**
   * The requests the step sends: the config path of each one's URL and the config paths whose
   * templates go into it (`{url: 'url', carries: ['url', 'headers', 'payload']}`). When a definition
   * is saved, an `{{env.NAME}}` read in what a request carries whose URL has a fixed origin that
   * WORKFLOW_ENV_ORIGINS does not bind NAME to is a 422 (`rule: secretOrigin`). At run time the step
   * itself checks what it sends (SecretOrigins), as the `api` step does.
   */
  sends?: { url: string; carries: string[] }[];
  /** One line for the documentation and the Swagger description. */
  description?: string;
}

/** Marks a provider as the handler of a workflow step type (see `WorkflowStepHandler`). */
export function WorkflowStep(options: WorkflowStepOptions): ClassDecorator {
  return applyDecorators(Injectable(), SetMetadata(WORKFLOW_STEP, options));
}
