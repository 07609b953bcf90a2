import { Module } from '@nestjs/common';
import { ConfigsModule } from '../configs/configs.module';
import { DataModule } from '../data/data.module';
import { StatsController } from './stats.controller';
import { StatsRepository } from './stats.repository';
import { StatsService } from './stats.service';

@Module({
  imports: [ConfigsModule, DataModule],
  controllers: [StatsController],
  providers: [StatsService, StatsRepository],
})
export class StatsModule {}
