import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { FormConfigsModule } from '../form-configs/form-configs.module';
import { RolesModule } from '../roles/roles.module';
import { ValidationModule } from '../validation/validation.module';
import { AiConfigService } from './ai-config.service';
import { AiController } from './ai.controller';
import { ConfigDraftProviders } from './providers/config-draft-providers.service';
import { InferDraftProviderModule } from './providers/infer/infer-draft.provider';
import { OpenAiDraftProviderModule } from './providers/openai/openai-draft.provider';

/** The built-in draft providers, each a module of its own, registered exactly as a third party's would be. */
export const BUILT_IN_DRAFT_PROVIDER_MODULES = [InferDraftProviderModule, OpenAiDraftProviderModule];

@Module({
  imports: [
    DiscoveryModule,
    FormConfigsModule,
    RolesModule,
    ValidationModule,
    ...BUILT_IN_DRAFT_PROVIDER_MODULES,
  ],
  controllers: [AiController],
  providers: [AiConfigService, ConfigDraftProviders],
})
export class AiModule {}
