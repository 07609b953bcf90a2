import { Module } from '@nestjs/common';
import { DataModule } from '../data/data.module';
import { ImportProcessor } from './import-processor';
import { ImportRetention } from './import-retention';
import { ImportStager } from './import-stager';
import { ImportsController } from './imports.controller';
import { ImportsRepository } from './imports.repository';
import { ImportUpkeepRepository } from './import-upkeep.repository';
import { ImportsService } from './imports.service';

/**
 * Bulk import of records (README "Bulk import"): uploads read and checked in batches, stored
 * through the data module's RecordImports as they are read (`valid-rows`) or staged first (tables
 * data_imports, data_import_rows); finished imports purged after IMPORT_RETENTION_DAYS.
 */
@Module({
  imports: [DataModule],
  controllers: [ImportsController],
  exports: [ImportsService],
  providers: [
    ImportsService,
    ImportsRepository,
    ImportUpkeepRepository,
    ImportStager,
    ImportProcessor,
    ImportRetention,
  ],
})
export class ImportsModule {}
