import { Module } from '@nestjs/common';
import { FormConfigsModule } from '../form-configs/form-configs.module';
import { DataModule } from '../data/data.module';
import { ExportController } from './export.controller';
import { ExportService } from './export.service';
import { RecordCursorRepository } from './record-cursor.repository';

@Module({
  imports: [FormConfigsModule, DataModule],
  controllers: [ExportController],
  providers: [ExportService, RecordCursorRepository],
  exports: [ExportService],
})
export class ExportModule {}
