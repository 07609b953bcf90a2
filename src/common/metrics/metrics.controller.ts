import { Controller, Get, Header, Headers, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { Public } from '../auth/auth-decision.decorators';
import { SkipSiteResolution } from '../context/skip-site.decorator';
import { AppError } from '../errors/app-error';
import { Metrics } from './metrics.service';

/**
 * `GET /metrics` on the main port (Prometheus text format). Public to the auth guard on purpose:
 * a scraper has no user; METRICS_TOKEN, when set, is checked here instead. Not rate limited. A 404
 * when metrics are off or served on METRICS_PORT instead.
 */
@ApiExcludeController()
@SkipThrottle()
@SkipSiteResolution()
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @Public()
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  @Header('cache-control', 'no-store')
  scrape(@Headers('authorization') authorization?: string): Promise<string> {
    if (!this.metrics.enabled || this.config.metricsPort !== null) throw new AppError('ROUTE_NOT_FOUND');
    if (!this.metrics.acceptsScrape(authorization)) throw new AppError('UNAUTHORIZED');
    return this.metrics.scrape();
  }
}
