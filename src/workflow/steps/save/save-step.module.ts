import { Module } from '@nestjs/common';
import { DataModule } from '../../../data/data.module';
import { SaveStep } from './save-step';

/** The `save` step type, registered as any step type is: a `@WorkflowStep` provider in a module. */
@Module({ imports: [DataModule], providers: [SaveStep] })
export class SaveStepModule {}
