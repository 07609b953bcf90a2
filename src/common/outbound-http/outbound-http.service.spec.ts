import { Test, type TestingModule } from '@nestjs/testing';
import { gzipSync } from 'node:zlib';
import { closedPort } from '../../../test/utils/free-port';
import { startHttpServer, type HttpTestServer } from '../../../test/utils/http-test-server';
import { loadConfig } from '../../config/app-config';
import { AppConfigModule } from '../../config/config.module';
import { OutboundHttpError } from './outbound-http.error';
import { OutboundHttpModule } from './outbound-http.module';
import { OUTBOUND_DNS_RESOLVER, systemDnsResolver, type DnsResolver } from './dns-resolver';
import { OutboundHttpService, type OutboundRequest } from './outbound-http.service';

/** Names the fake resolver knows; anything else goes to the system resolver (`localhost`). */
const FAKE_DNS: Record<string, string[]> = {
  'internal.test': ['127.0.0.1'],
  'pinned.test': ['127.0.0.1'],
};

describe('OutboundHttpService (real servers on 127.0.0.1)', () => {
  let server: HttpTestServer; // 127.0.0.1, allow-listed with its port
  let other: HttpTestServer; // 127.0.0.1, another allow-listed origin
  let refused: HttpTestServer; // 127.0.0.2, never allow-listed
  let moduleRef: TestingModule;
  let outbound: OutboundHttpService;
  const lookups: string[] = [];

  const resolver: DnsResolver = async (hostname) => {
    lookups.push(hostname);
    const fake = FAKE_DNS[hostname];
    return fake ? fake.map((address) => ({ address, family: 4 })) : systemDnsResolver(hostname);
  };

  beforeAll(async () => {
    server = await startHttpServer('127.0.0.1');
    other = await startHttpServer('127.0.0.1');
    refused = await startHttpServer('127.0.0.2');
    const config = loadConfig({
      NODE_ENV: 'test',
      WORKFLOW_API_TIMEOUT_MS: '2000',
      WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${server.port},127.0.0.1:${other.port},pinned.test:${server.port}`,
    });
    moduleRef = await Test.createTestingModule({
      imports: [AppConfigModule.forRoot(config), OutboundHttpModule],
    })
      .overrideProvider(OUTBOUND_DNS_RESOLVER)
      .useValue(resolver)
      .compile();
    outbound = moduleRef.get(OutboundHttpService);
  });

  afterAll(async () => {
    await moduleRef.close();
    await Promise.all([server.close(), other.close(), refused.close()]);
  });

  beforeEach(() => {
    server.reset();
    other.reset();
    refused.reset();
    lookups.length = 0;
  });

  // Generous: a loaded CI machine must not turn a slow loopback answer into a TIMEOUT; the timeout
  // tests set their own short limits.
  const send = (request: Partial<OutboundRequest> & { url: string }) =>
    outbound.request({ method: 'GET', timeoutMs: 10_000, ...request });

  async function failure(promise: Promise<unknown>): Promise<OutboundHttpError> {
    const error = await promise.then(
      () => {
        throw new Error('expected the request to fail');
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OutboundHttpError);
    return error as OutboundHttpError;
  }

  const nothingReached = (...servers: HttpTestServer[]) => {
    for (const s of servers) {
      expect(s.requests).toHaveLength(0);
      expect(s.connections).toBe(0);
    }
  };

  describe('refused destinations (nothing is sent)', () => {
    it.each([
      ['a loopback address', (r: HttpTestServer) => `http://127.0.0.2:${r.port}/`],
      ['a decimal spelling (2130706434 = 127.0.0.2)', (r: HttpTestServer) => `http://2130706434:${r.port}/`],
      ['a hex spelling', (r: HttpTestServer) => `http://0x7f000002:${r.port}/`],
      ['an octal spelling', (r: HttpTestServer) => `http://0177.0.0.2:${r.port}/`],
      ['a short spelling', (r: HttpTestServer) => `http://127.2:${r.port}/`],
    ])('refuses %s', async (_label, url) => {
      const error = await failure(send({ url: url(refused) }));
      expect(error.code).toBe('DESTINATION_REFUSED');
      expect(error.retryable).toBe(false);
      expect(error.details).toMatchObject({ address: '127.0.0.2', reason: 'loopback' });
      nothingReached(refused);
    });

    it('refuses the IPv4-mapped form of an allow-listed address ([::ffff:127.0.0.1] = [::ffff:7f00:1])', async () => {
      const error = await failure(send({ url: `http://[::ffff:127.0.0.1]:${server.port}/` }));
      expect(error.code).toBe('DESTINATION_REFUSED');
      expect(error.details).toMatchObject({ address: '::ffff:7f00:1', reason: 'ipv4Mapped loopback' });
      nothingReached(server);
    });

    it('refuses 0.0.0.0 (which would reach this host)', async () => {
      const error = await failure(send({ url: `http://0.0.0.0:${server.port}/` }));
      expect(error.code).toBe('DESTINATION_REFUSED');
      nothingReached(server);
    });

    it('refuses localhost when it is not allow-listed (the name resolves to loopback)', async () => {
      const error = await failure(send({ url: `http://localhost:${server.port}/` }));
      expect(error.code).toBe('DESTINATION_REFUSED');
      expect(error.details).toMatchObject({ host: 'localhost' });
      expect(lookups).toEqual(['localhost']);
      nothingReached(server);
    });

    it('refuses a made-up name that resolves to a private address', async () => {
      const error = await failure(
        send({ url: `http://internal.test:${server.port}/`, method: 'POST', body: 'x' }),
      );
      expect(error.code).toBe('DESTINATION_REFUSED');
      expect(error.details).toEqual({ host: 'internal.test', address: '127.0.0.1', reason: 'loopback' });
      nothingReached(server);
    });

    it('the allow-list entry is bound to its port', async () => {
      const error = await failure(send({ url: `http://pinned.test:${refused.port}/` }));
      expect(error.code).toBe('DESTINATION_REFUSED');
      nothingReached(refused);
    });

    it.each([
      ['an IP literal', (r: HttpTestServer) => `http://127.0.0.2:${r.port}/secret`],
      ['a decimal spelling', (r: HttpTestServer) => `http://2130706434:${r.port}/secret`],
      ['a name resolving to loopback', (r: HttpTestServer) => `http://localhost:${r.port}/secret`],
    ])('refuses a redirect from an allow-listed server to %s', async (_label, target) => {
      server.handle((_req, res) => {
        res.writeHead(302, { location: target(refused) });
        res.end();
      });
      const error = await failure(send({ url: server.url('/start') }));
      expect(error.code).toBe('DESTINATION_REFUSED');
      expect(server.requests.map((r) => r.url)).toEqual(['/start']);
      nothingReached(refused);
    });

    it('refuses a redirect to a non-listed name that resolves to the allow-listed address', async () => {
      server.handle((req, res) => {
        res.writeHead(307, { location: `http://internal.test:${server.port}/again` });
        res.end();
      });
      const error = await failure(send({ url: server.url('/start'), method: 'POST', body: 'payload' }));
      expect(error.code).toBe('DESTINATION_REFUSED');
      expect(server.requests.map((r) => r.url)).toEqual(['/start']);
      expect(server.connections).toBeLessThanOrEqual(1);
    });
  });

  describe('URLs', () => {
    it.each(['ftp://127.0.0.1/x', 'file:///etc/passwd', 'not a url', '/relative', 'http://'])(
      'rejects %s as INVALID_URL',
      async (url) => {
        const error = await failure(send({ url }));
        expect(error.code).toBe('INVALID_URL');
        expect(error.retryable).toBe(false);
      },
    );

    it('rejects a redirect to a non-http scheme', async () => {
      server.handle((_req, res) => {
        res.writeHead(302, { location: 'file:///etc/passwd' });
        res.end();
      });
      expect((await failure(send({ url: server.url() }))).code).toBe('INVALID_URL');
    });
  });

  describe('answers', () => {
    it('parses a JSON body and returns status and lower-cased headers', async () => {
      server.handle((_req, res) => {
        res.writeHead(201, { 'Content-Type': 'application/json; charset=utf-8', 'X-Thing': 'a' });
        res.end(JSON.stringify({ id: 7, name: 'Árvíztűrő' }));
      });
      const response = await send({ url: server.url('/items?q=1') });
      expect(response).toMatchObject({
        status: 201,
        data: { id: 7, name: 'Árvíztűrő' },
        url: server.url('/items?q=1'),
      });
      expect(response.headers['x-thing']).toBe('a');
      expect(server.requests[0]).toMatchObject({ method: 'GET', url: '/items?q=1' });
    });

    it.each([
      ['text/plain', 'hello', 'hello'],
      ['text/html; charset=utf-8', '<b>hi</b>', '<b>hi</b>'],
      ['application/problem+json', '{"title":"x"}', { title: 'x' }],
      ['application/json', 'not json', 'not json'],
      ['application/json', '', null],
      [undefined, 'raw', 'raw'],
    ])('content type %s gives the right data', async (contentType, body, data) => {
      server.handle((_req, res) => {
        res.writeHead(200, contentType ? { 'content-type': contentType } : {});
        res.end(body);
      });
      expect((await send({ url: server.url() })).data).toEqual(data);
    });

    it('decodes a declared charset', async () => {
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' });
        res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      });
      expect((await send({ url: server.url() })).data).toBe('café');
    });

    it('returns non-2xx answers instead of throwing', async () => {
      server.handle((_req, res) => {
        res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '3' });
        res.end('busy');
      });
      const response = await send({ url: server.url() });
      expect(response).toMatchObject({ status: 503, data: 'busy', headers: { 'retry-after': '3' } });
    });

    it('sends method, headers and body as given', async () => {
      server.handle((_req, res, body) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`got ${body}`);
      });
      const response = await send({
        url: server.url('/put'),
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
        body: '{"a":1}',
      });
      expect(response.data).toBe('got {"a":1}');
      expect(server.requests[0]).toMatchObject({ method: 'PUT', body: '{"a":1}' });
      expect(server.requests[0].headers).toMatchObject({
        'content-type': 'application/json',
        'x-api-key': 'k',
      });
    });
  });

  describe('limits', () => {
    it('fails with TIMEOUT when the server never answers', async () => {
      server.handle(() => undefined);
      const error = await failure(send({ url: server.url('/slow'), timeoutMs: 200 }));
      expect(error.code).toBe('TIMEOUT');
      expect(error.retryable).toBe(true);
      expect(server.requests).toHaveLength(1);
    });

    it('the timeout covers the body too', async () => {
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
      });
      expect((await failure(send({ url: server.url(), timeoutMs: 200 }))).code).toBe('TIMEOUT');
    });

    it('the caller signal ends the exchange', async () => {
      server.handle(() => undefined);
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const error = await failure(send({ url: server.url(), timeoutMs: 5000, signal: controller.signal }));
      expect(error.code).toBe('TIMEOUT');
      expect(error.details).toMatchObject({ aborted: true });
    });

    it('fails with RESPONSE_TOO_LARGE over the cap', async () => {
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('x'.repeat(5000));
      });
      const error = await failure(send({ url: server.url(), maxResponseBytes: 1000 }));
      expect(error.code).toBe('RESPONSE_TOO_LARGE');
      expect(error.retryable).toBe(false);
    });

    it('counts the decompressed size (a gzip bomb is too large)', async () => {
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        res.end(gzipSync(Buffer.alloc(200_000)));
      });
      expect((await failure(send({ url: server.url(), maxResponseBytes: 10_000 }))).code).toBe(
        'RESPONSE_TOO_LARGE',
      );
    });

    it('cuts a body over the cap with truncateResponse instead of failing', async () => {
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('a'.repeat(600));
        res.end('b'.repeat(600));
      });
      const response = await send({ url: server.url(), maxResponseBytes: 1000, truncateResponse: true });
      expect(response.data).toBe('a'.repeat(600) + 'b'.repeat(400));
    });

    it('accepts a body exactly at the cap', async () => {
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('x'.repeat(1000));
      });
      expect((await send({ url: server.url(), maxResponseBytes: 1000 })).data).toHaveLength(1000);
    });

    it('fails with a retryable NETWORK_ERROR when the connection is refused', async () => {
      const port = await closedPort();
      const config = loadConfig({ NODE_ENV: 'test', WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${port}` });
      const module = await Test.createTestingModule({
        imports: [AppConfigModule.forRoot(config), OutboundHttpModule],
      }).compile();
      const error = await failure(
        module.get(OutboundHttpService).request({ method: 'GET', url: `http://127.0.0.1:${port}/` }),
      );
      expect(error).toMatchObject({
        code: 'NETWORK_ERROR',
        retryable: true,
        details: { errorCode: 'ECONNREFUSED' },
      });
      await module.close();
    });

    it('fails with a retryable NETWORK_ERROR when the server drops the connection', async () => {
      server.handle((req) => req.socket.destroy());
      const error = await failure(send({ url: server.url() }));
      expect(error).toMatchObject({
        code: 'NETWORK_ERROR',
        retryable: true,
        details: { errorCode: 'ECONNRESET' },
      });
    });
  });

  describe('redirects', () => {
    /** `/hop/n` redirects to `/hop/n-1` with `status`; `/hop/0` answers with the method and body it got. */
    const hops = (status: number) =>
      server.handle((req, res, body) => {
        const n = Number(/^\/hop\/(\d+)/.exec(req.url ?? '')?.[1] ?? 0);
        if (n > 0) {
          res.writeHead(status, { location: `/hop/${n - 1}` });
          res.end('moved');
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ method: req.method, body, contentType: req.headers['content-type'] ?? null }),
          );
        }
      });

    it('follows a 302, turning a POST into a GET without body', async () => {
      hops(302);
      const response = await send({
        url: server.url('/hop/1'),
        method: 'POST',
        body: '{"a":1}',
        headers: { 'content-type': 'application/json' },
      });
      expect(response.data).toEqual({ method: 'GET', body: '', contentType: null });
      expect(response.url).toBe(server.url('/hop/0'));
      expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /hop/1', 'GET /hop/0']);
    });

    it('follows a 303 as a GET', async () => {
      hops(303);
      const response = await send({ url: server.url('/hop/1'), method: 'PUT', body: 'x' });
      expect(response.data).toMatchObject({ method: 'GET', body: '' });
    });

    it('keeps a PUT through a 301', async () => {
      hops(301);
      const response = await send({ url: server.url('/hop/1'), method: 'PUT', body: 'x' });
      expect(response.data).toMatchObject({ method: 'PUT', body: 'x' });
    });

    it.each([307, 308])('follows a %d keeping method and body', async (status) => {
      hops(status);
      const response = await send({
        url: server.url('/hop/2'),
        method: 'POST',
        body: '{"a":1}',
        headers: { 'content-type': 'application/json' },
      });
      expect(response.data).toEqual({ method: 'POST', body: '{"a":1}', contentType: 'application/json' });
    });

    it('follows 5 redirects', async () => {
      hops(302);
      expect((await send({ url: server.url('/hop/5') })).status).toBe(200);
      expect(server.requests).toHaveLength(6);
    });

    it('fails on the 6th redirect with TOO_MANY_REDIRECTS', async () => {
      hops(302);
      const error = await failure(send({ url: server.url('/hop/6') }));
      expect(error.code).toBe('TOO_MANY_REDIRECTS');
      expect(error.retryable).toBe(false);
      expect(server.requests).toHaveLength(6);
    });

    it('returns a redirect as the answer, without following it, with followRedirects: false', async () => {
      hops(307);
      const response = await send({
        url: server.url('/hop/1'),
        method: 'POST',
        body: 'x',
        followRedirects: false,
      });
      expect(response.status).toBe(307);
      expect(response.headers.location).toBe('/hop/0');
      expect(response.data).toBe('moved');
      expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /hop/1']);
    });

    it('returns a redirect without a location as it is', async () => {
      server.handle((_req, res) => {
        res.writeHead(302);
        res.end();
      });
      expect((await send({ url: server.url() })).status).toBe(302);
    });

    it('drops credentials on a cross-origin redirect, keeps them on a same-origin one', async () => {
      server.handle((req, res) => {
        res.writeHead(307, { location: req.url === '/a' ? '/b' : other.url('/c') });
        res.end();
      });
      const response = await send({
        url: server.url('/a'),
        headers: { Authorization: 'Bearer secret', Cookie: 'sid=1', 'X-Other': 'kept' },
      });
      expect(response.status).toBe(200);
      expect(server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer secret', 'Bearer secret']);
      expect(other.requests).toHaveLength(1);
      expect(other.requests[0].headers.authorization).toBeUndefined();
      expect(other.requests[0].headers.cookie).toBeUndefined();
      expect(other.requests[0].headers['x-other']).toBe('kept');
    });
  });

  describe('pinning', () => {
    it('resolves each request (and redirect) once and connects to the address it checked', async () => {
      server.handle((req, res) => {
        if (req.url === '/first') res.writeHead(302, { location: '/second' });
        else res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(req.headers.host);
      });
      const url = `http://pinned.test:${server.port}/first`;
      const first = await send({ url });
      const second = await send({ url });
      expect(first.data).toBe(`pinned.test:${server.port}`);
      expect(second.status).toBe(200);
      // pinned.test exists only in the injected resolver: every request used its (single) answer.
      expect(server.requests).toHaveLength(4);
      expect(lookups).toEqual(['pinned.test', 'pinned.test', 'pinned.test', 'pinned.test']);
    });

    it('keeps the connection to a checked address alive for the next request', async () => {
      const url = `http://pinned.test:${server.port}/`;
      for (let i = 0; i < 3; i++)
        expect((await send({ url, method: 'POST', body: `n${i}` })).status).toBe(200);
      expect(server.requests.map((r) => r.body)).toEqual(['n0', 'n1', 'n2']);
      // One connection at most: an earlier test's idle one to this address may serve them all.
      expect(server.connections).toBeLessThanOrEqual(1);
      // Each request checked its destination again before it took the open connection.
      expect(lookups).toEqual(['pinned.test', 'pinned.test', 'pinned.test']);
      // Another name on the same address does not get that connection (nor the allow-list entry).
      const error = await failure(send({ url: `http://internal.test:${server.port}/` }));
      expect(error.code).toBe('DESTINATION_REFUSED');
      expect(server.requests).toHaveLength(3);
    });

    it('guards https the same way', async () => {
      expect((await failure(send({ url: `https://127.0.0.2:${refused.port}/` }))).code).toBe(
        'DESTINATION_REFUSED',
      );
      expect((await failure(send({ url: `https://internal.test:${refused.port}/` }))).code).toBe(
        'DESTINATION_REFUSED',
      );
      nothingReached(refused);
      // An allowed name connects through the guarded https agent; the plain-http server then fails the handshake.
      const error = await failure(send({ url: `https://pinned.test:${server.port}/` }));
      expect(error).toMatchObject({ code: 'TLS_ERROR', retryable: false });
      expect(lookups).toEqual(['internal.test', 'pinned.test']);
      expect(server.connections).toBe(1);
    });

    it('does not resolve IP literals', async () => {
      await send({ url: server.url() });
      expect(lookups).toEqual([]);
      expect(server.requests).toHaveLength(1);
    });
  });
});
