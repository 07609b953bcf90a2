import { Module } from '@nestjs/common';
import { IsIn, IsOptional, IsString, Length } from 'class-validator';
import type { StepContext, StepOutcome, WorkflowStepHandler } from '../../src/workflow/sdk/step-handler';
import { StepError } from '../../src/workflow/sdk/step-error';
import { WorkflowStep } from '../../src/workflow/sdk/workflow-step.decorator';

/** A third-party step type for the tests, registered exactly as README "Adding a step type" says. */
export class EchoConfig {
  /** Templates allowed: `Hello {{input.name}}`. */
  @IsString() @Length(1, 200) message: string;

  @IsOptional() @IsIn(['upper', 'lower']) case?: 'upper' | 'lower';
}

export interface EchoResult {
  message: string;
  step: string;
  userId: string | null;
  attempt: number;
}

@WorkflowStep({ type: 'echo', config: EchoConfig, replayable: true, description: 'Echoes its message' })
export class EchoStep implements WorkflowStepHandler<EchoConfig, EchoResult> {
  async execute(context: StepContext, config: EchoConfig): Promise<StepOutcome<EchoResult>> {
    if (config.message === 'fail') throw new StepError('asked to fail', { code: 'ECHO_FAILED' });
    const message =
      config.case === 'upper'
        ? config.message.toUpperCase()
        : config.case === 'lower'
          ? config.message.toLowerCase()
          : config.message;
    return {
      result: {
        message,
        step: context.step.name,
        userId: context.scope.user?.id ?? null,
        attempt: context.attempt,
      },
    };
  }
}

@Module({ providers: [EchoStep] })
export class EchoStepModule {}

/** A second provider claiming the built-in `save` type: the application must refuse to boot. */
@WorkflowStep({ type: 'save', config: EchoConfig, replayable: true })
export class ShadowSaveStep implements WorkflowStepHandler<EchoConfig, EchoResult> {
  async execute(): Promise<StepOutcome<EchoResult>> {
    throw new StepError('never registered');
  }
}

@Module({ providers: [ShadowSaveStep] })
export class ShadowSaveStepModule {}
