import { Module } from '@nestjs/common';
import { PermissionsModule } from '../../../permissions/permissions.module';
import { ValidationModule } from '../../../validation/validation.module';
import { ValidateStep } from './validate-step';

/** The `validate` step type, registered as any step type is: a `@WorkflowStep` provider in a module. */
@Module({ imports: [PermissionsModule, ValidationModule], providers: [ValidateStep] })
export class ValidateStepModule {}
