import { Module } from '@nestjs/common';
import { DataModule } from '../data/data.module';
import { StatsController } from './stats.controller';
import { StatsService } from './stats.service';

@Module({
  imports: [DataModule],
  controllers: [StatsController],
  providers: [StatsService],
})
export class StatsModule {}
