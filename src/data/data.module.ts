import { Module } from '@nestjs/common';
import { FormConfigsModule } from '../form-configs/form-configs.module';
import { ValidationModule } from '../validation/validation.module';
import { GridQueryService } from './grid/grid-query.service';
import { RecordListService } from './record-list.service';
import { RecordsController } from './records.controller';
import { RecordsRepository } from './records.repository';
import { RecordsService } from './records.service';

@Module({
  imports: [FormConfigsModule, ValidationModule],
  controllers: [RecordsController],
  providers: [RecordsService, RecordsRepository, RecordListService, GridQueryService],
  exports: [RecordsService, RecordsRepository],
})
export class DataModule {}
