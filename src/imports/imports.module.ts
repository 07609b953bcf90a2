import { Module } from '@nestjs/common';
import { DataModule } from '../data/data.module';
import { ImportProcessor } from './import-processor';
import { ImportRetention } from './import-retention';
import { ImportStager } from './import-stager';
import { ImportsController } from './imports.controller';
import { ImportsRepository } from './imports.repository';
import { ImportsService } from './imports.service';

/**
 * Bulk import of records (README "Bulk import"): uploads read into staged rows (tables
 * data_imports, data_import_rows), stored through the data module's RecordImports.
 */
@Module({
  imports: [DataModule],
  controllers: [ImportsController],
  exports: [ImportsService],
  providers: [ImportsService, ImportsRepository, ImportStager, ImportProcessor, ImportRetention],
})
export class ImportsModule {}
