import { HttpModule } from '@nestjs/axios';
import { Module } from '@nestjs/common';
import { OUTBOUND_DNS_RESOLVER, systemDnsResolver } from './dns-resolver';
import { OutboundHttpService } from './outbound-http.service';

/**
 * The guarded outbound HTTP client (address policy, DNS pinning, redirects, capped bodies), shared by
 * the `api` workflow step and webhooks. Needs APP_CONFIG (global).
 */
@Module({
  imports: [HttpModule.register({ maxRedirects: 0, proxy: false })],
  providers: [{ provide: OUTBOUND_DNS_RESOLVER, useValue: systemDnsResolver }, OutboundHttpService],
  exports: [OutboundHttpService],
})
export class OutboundHttpModule {}
