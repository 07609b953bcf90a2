import { Module } from '@nestjs/common';
import { DataModule } from '../data/data.module';
import { ExportController } from './export.controller';
import { ExportService } from './export.service';

@Module({
  imports: [DataModule],
  controllers: [ExportController],
  providers: [ExportService],
})
export class ExportModule {}
