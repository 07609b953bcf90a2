import { Module } from '@nestjs/common';
import { ConfigsModule } from '../configs/configs.module';
import { DataModule } from '../data/data.module';
import { ExportController } from './export.controller';
import { ExportService } from './export.service';
import { RecordCursorRepository } from './record-cursor.repository';

@Module({
  imports: [ConfigsModule, DataModule],
  controllers: [ExportController],
  providers: [ExportService, RecordCursorRepository],
  exports: [ExportService],
})
export class ExportModule {}
