import { Module } from '@nestjs/common';
import { ApprovalStep } from './approval-step';

/** The `approval` step type, registered as any step type is: a `@WorkflowStep` provider in a module. */
@Module({ providers: [ApprovalStep] })
export class ApprovalStepModule {}
