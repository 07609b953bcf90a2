import { Module } from '@nestjs/common';
import { ValidationModule } from '../validation/validation.module';
import { ConfigCache } from './config-cache';
import { ConfigsController } from './configs.controller';
import { ConfigsRepository } from './configs.repository';
import { ConfigsService } from './configs.service';

@Module({
  imports: [ValidationModule],
  controllers: [ConfigsController],
  providers: [ConfigsService, ConfigsRepository, ConfigCache],
  exports: [ConfigsService, ConfigsRepository],
})
export class ConfigsModule {}
