import { Module } from '@nestjs/common';
import { AttachmentsModule } from '../attachments/attachments.module';
import { DataModule } from '../data/data.module';
import { ExportController } from './export.controller';
import { ExportService } from './export.service';

@Module({
  imports: [DataModule, AttachmentsModule],
  controllers: [ExportController],
  providers: [ExportService],
})
export class ExportModule {}
