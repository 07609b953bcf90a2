import { Module } from '@nestjs/common';
import { ConditionalStep } from './conditional-step';

/** The `conditional` step type, registered as any step type is: a `@WorkflowStep` provider in a module. */
@Module({ providers: [ConditionalStep] })
export class ConditionalStepModule {}
