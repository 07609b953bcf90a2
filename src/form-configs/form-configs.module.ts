import { ConditionalRequests } from '../common/http/conditional-requests';
import { Module } from '@nestjs/common';
import { SitesModule } from '../sites/sites.module';
import { ValidationModule } from '../validation/validation.module';
import { FormConfigCache } from './form-config-cache';
import { FormConfigsController } from './form-configs.controller';
import { FormConfigsRepository } from './form-configs.repository';
import { FormConfigsService } from './form-configs.service';
import { FormConfigVersionsRepository } from './form-config-versions.repository';
import { FormConfigVersionsService } from './form-config-versions.service';

@Module({
  imports: [ValidationModule, SitesModule],
  controllers: [FormConfigsController],
  providers: [
    FormConfigsService,
    FormConfigsRepository,
    FormConfigCache,
    ConditionalRequests,
    FormConfigVersionsService,
    FormConfigVersionsRepository,
  ],
  exports: [FormConfigsService],
})
export class FormConfigsModule {}
