import { timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  register as processRegistry,
  Registry,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
} from 'prom-client';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';

/** Every family this service exports starts with this prefix; process metrics keep prom-client's names. */
export const METRIC_PREFIX = 'fdws_';

let processMetricsStarted = false;

/** Seconds buckets from 5 ms to 30 s: requests and workflow steps share them. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The Prometheus metrics of one application instance. Features add their own families through
 * `counter`/`gauge`/`histogram` (names get the `fdws_` prefix); gauges that read state (pool size,
 * queue depth) use `collect`, so nothing is computed on the request path. The process metrics
 * (event-loop lag, heap, RSS, GC) are collected once per process into prom-client's default
 * registry and merged in at scrape time, so several instances in one process (tests) share them.
 */
@Injectable()
export class Metrics {
  readonly enabled: boolean;
  private readonly registry = new Registry();
  private readonly requestDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly rateLimited: Counter<'route'>;
  private readonly token: Buffer | null;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.enabled = config.metricsEnabled;
    this.token = config.metricsToken ? Buffer.from(config.metricsToken) : null;
    if (this.enabled && !processMetricsStarted) {
      processMetricsStarted = true;
      collectDefaultMetrics({ register: processRegistry });
    }
    this.requestDuration = this.histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: DURATION_BUCKETS,
    });
    this.rateLimited = this.counter({
      name: 'rate_limit_refusals_total',
      help: 'Requests refused with 429 by a rate limit, by route pattern',
      labelNames: ['route'],
    });
  }

  counter<T extends string>(config: CounterConfiguration<T>): Counter<T> {
    return new Counter({ ...config, name: METRIC_PREFIX + config.name, registers: [this.registry] });
  }

  gauge<T extends string>(config: GaugeConfiguration<T>): Gauge<T> {
    return new Gauge({ ...config, name: METRIC_PREFIX + config.name, registers: [this.registry] });
  }

  histogram<T extends string>(config: HistogramConfiguration<T>): Histogram<T> {
    return new Histogram({ ...config, name: METRIC_PREFIX + config.name, registers: [this.registry] });
  }

  /** Called once per answered request (Fastify's onResponse); `route` is the pattern, never the URL. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    if (!this.enabled) return;
    this.requestDuration.observe({ method, route, status: String(status) }, seconds);
    if (status === 429) this.rateLimited.inc({ route });
  }

  /** With METRICS_TOKEN set, a scrape must send it as a bearer token (compared in constant time). */
  acceptsScrape(authorization: string | undefined): boolean {
    if (!this.token) return true;
    const sent = Buffer.from(/^Bearer (.+)$/i.exec(authorization ?? '')?.[1] ?? '');
    return sent.length === this.token.length && timingSafeEqual(sent, this.token);
  }

  contentType(): string {
    return this.registry.contentType;
  }

  async scrape(): Promise<string> {
    return Registry.merge([processRegistry, this.registry]).metrics();
  }
}
