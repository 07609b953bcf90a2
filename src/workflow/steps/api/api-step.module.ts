import { HttpModule } from '@nestjs/axios';
import { Module } from '@nestjs/common';
import { ApiStep } from './api-step';
import { OUTBOUND_DNS_RESOLVER, systemDnsResolver } from './dns-resolver';
import { OutboundHttpService } from './outbound-http.service';

/**
 * The `api` workflow step, registered as any third-party step would be: a provider marked
 * `@WorkflowStep` in a module of its own (the registry finds it at boot). Needs APP_CONFIG (global).
 */
@Module({
  imports: [HttpModule.register({ maxRedirects: 0, proxy: false })],
  providers: [{ provide: OUTBOUND_DNS_RESOLVER, useValue: systemDnsResolver }, OutboundHttpService, ApiStep],
  exports: [OutboundHttpService],
})
export class ApiStepModule {}
