import { Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { MetricsServer } from './metrics-server';
import { Metrics } from './metrics.service';

/** Prometheus metrics (METRICS_ENABLED): every module may inject `Metrics` to add its families. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [Metrics, MetricsServer],
  exports: [Metrics],
})
export class MetricsModule {}
