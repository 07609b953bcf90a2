import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import type { FieldError } from '../../common/errors/app-error';
import { stepConfigProblems } from './model/step-config';
import type { WorkflowStepHandler } from '../sdk/step-handler';
import { WORKFLOW_STEP, type WorkflowStepOptions } from '../sdk/workflow-step.decorator';

export interface RegisteredStep {
  options: WorkflowStepOptions;
  handler: WorkflowStepHandler;
}

/**
 * Every step type of the application, found at boot among the providers of all modules by their
 * `@WorkflowStep` marker, exactly as a third party's step type is found. A type registered twice
 * stops the boot.
 */
@Injectable()
export class StepRegistry implements OnModuleInit {
  private readonly steps = new Map<string, RegisteredStep & { className: string }>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const { metatype, instance } = wrapper;
      if (!metatype || typeof metatype !== 'function' || !instance) continue;
      const options = this.reflector.get<WorkflowStepOptions | undefined>(WORKFLOW_STEP, metatype);
      if (!options) continue;
      const existing = this.steps.get(options.type);
      if (existing)
        throw new Error(
          `Workflow step type "${options.type}" is registered twice (${existing.className} and ${metatype.name})`,
        );
      if (typeof (instance as Partial<WorkflowStepHandler>).execute !== 'function')
        throw new Error(`Workflow step ${metatype.name} ("${options.type}") has no execute method`);
      this.steps.set(options.type, {
        options,
        handler: instance as WorkflowStepHandler,
        className: metatype.name,
      });
    }
  }

  get(type: string): RegisteredStep | undefined {
    return this.steps.get(type);
  }

  types(): string[] {
    return [...this.steps.keys()].sort();
  }

  /** The config of a step checked against its type's config class; field names below `prefix`. */
  configProblems(type: string, config: unknown, prefix: string): FieldError[] {
    const step = this.steps.get(type);
    if (!step) return [{ field: prefix, rule: 'stepType', message: `unknown step type "${type}"` }];
    return stepConfigProblems(step.options.config, config, prefix);
  }
}
