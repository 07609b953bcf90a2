import { Module } from '@nestjs/common';
import { FormConfigsModule } from '../form-configs/form-configs.module';
import { DataModule } from '../data/data.module';
import { StatsController } from './stats.controller';
import { StatsRepository } from './stats.repository';
import { StatsService } from './stats.service';

@Module({
  imports: [FormConfigsModule, DataModule],
  controllers: [StatsController],
  providers: [StatsService, StatsRepository],
})
export class StatsModule {}
