import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** The body as UTF-8 text. */
  body: string;
  /** The body's bytes as received (binary bodies: files, multipart). */
  bytes: Buffer;
}

export type TestHandler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A real HTTP server on a loopback address that records every request and connection it gets. */
export interface HttpTestServer {
  readonly host: string;
  readonly port: number;
  /** `http://host:port` + path. */
  url(path?: string): string;
  readonly requests: RecordedRequest[];
  /** TCP connections accepted (a refused destination must leave this at 0). */
  readonly connections: number;
  /** Replaces the handler (default: 200 `{"ok":true}`). */
  handle(handler: TestHandler): void;
  reset(): void;
  close(): Promise<void>;
}

/**
 * A handler that answers `body` after `ms`, unless the caller hangs up first: a test that cuts a slow
 * call then leaves no timer behind to keep its jest worker alive.
 */
export const answerAfter =
  (ms: number, body = '{}'): TestHandler =>
  (_req, res) => {
    const timer = setTimeout(() => res.end(body), ms);
    res.on('close', () => clearTimeout(timer));
  };

const defaultHandler: TestHandler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"ok":true}');
};

export async function startHttpServer(host = '127.0.0.1', port = 0): Promise<HttpTestServer> {
  let handler = defaultHandler;
  const requests: RecordedRequest[] = [];
  let connections = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const body = bytes.toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, bytes });
      handler(req, res, body);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    host,
    port: address.port,
    url: (path = '/') => `http://${host}:${address.port}${path}`,
    requests,
    get connections() {
      return connections;
    },
    handle: (next) => {
      handler = next;
    },
    reset: () => {
      requests.length = 0;
      connections = 0;
      handler = defaultHandler;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
