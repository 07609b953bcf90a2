import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP JSON export carries it, with its attributes flattened. */
export interface ReceivedSpan {
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}

/** A real OTLP/HTTP receiver on 127.0.0.1 that keeps every span exported to `/v1/traces` (JSON). */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private server: Server | null = null;

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.url === '/v1/traces') this.keep(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }

  async waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.spans)) {
      if (Date.now() > deadline)
        throw new Error(`spans not received; got ${this.spans.map((s) => s.name).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private keep(body: {
    resourceSpans: Array<{
      scopeSpans: Array<{
        scope: { name: string };
        spans: Array<{
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          attributes?: Array<{ key: string; value: OtlpValue }>;
          links?: Array<{ traceId: string; spanId: string }>;
        }>;
      }>;
    }>;
  }): void {
    for (const resource of body.resourceSpans)
      for (const scoped of resource.scopeSpans)
        for (const span of scoped.spans) {
          const attributes: Record<string, unknown> = {};
          for (const { key, value } of span.attributes ?? [])
            attributes[key] = value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
          this.spans.push({
            scope: scoped.scope.name,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || undefined,
            name: span.name,
            attributes,
            links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
          });
        }
  }
}
