import { Module } from '@nestjs/common';
import { TransformStep } from './transform-step';

/** The `transform` step type, registered as any step type is: a `@WorkflowStep` provider in a module. */
@Module({ providers: [TransformStep] })
export class TransformStepModule {}
