import { Module } from '@nestjs/common';
import { OutboundHttpModule } from '../../../common/outbound-http';
import { ApiStep } from './api-step';

/**
 * The `api` workflow step, registered as any third-party step would be: a provider marked
 * `@WorkflowStep` in a module of its own (the registry finds it at boot). Needs APP_CONFIG (global).
 */
@Module({
  imports: [OutboundHttpModule],
  providers: [ApiStep],
})
export class ApiStepModule {}
