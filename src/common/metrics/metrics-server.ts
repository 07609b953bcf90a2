import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { Metrics } from './metrics.service';

/** With METRICS_PORT set, `/metrics` is served on that port only (keep it off the public network). */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server: Server | null = null;

  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The bound port (METRICS_PORT=0 picks a free one), or null when there is no separate server. */
  get port(): number | null {
    return (this.server?.address() as AddressInfo | null)?.port ?? null;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.metrics.enabled || this.config.metricsPort === null) return;
    const server = createServer((request, response) => {
      const path = (request.url ?? '').split('?')[0];
      if (request.method !== 'GET' || path !== '/metrics') {
        response.writeHead(404).end();
      } else if (!this.metrics.acceptsScrape(request.headers.authorization)) {
        response.writeHead(401).end();
      } else {
        this.metrics.scrape().then(
          (text) => response.writeHead(200, { 'content-type': this.metrics.contentType() }).end(text),
          () => response.writeHead(500).end(),
        );
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.metricsPort!, this.config.host, () => resolve());
    });
    this.server = server;
    this.logger.log(`Metrics at http://${this.config.host}:${this.port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}
