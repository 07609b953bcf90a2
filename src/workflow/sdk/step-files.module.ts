import { Global, Module } from '@nestjs/common';
import { DataModule } from '../../data/data.module';
import { StepFiles } from './step-files';

/**
 * Makes StepFiles injectable in every step's module once the workflow module (which imports this
 * one) is in the application; a step used without it (a unit test of its module) injects it
 * `@Optional()` and refuses to touch files.
 */
@Global()
@Module({ imports: [DataModule], providers: [StepFiles], exports: [StepFiles] })
export class StepFilesModule {}
