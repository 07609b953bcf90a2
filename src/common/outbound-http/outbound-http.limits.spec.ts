import { gzipSync } from 'node:zlib';
import { Test } from '@nestjs/testing';
import { loadConfig } from '../../config/app-config';
import { AppConfigModule } from '../../config/config.module';
import { OutboundHttpModule } from './outbound-http.module';
import { OutboundHttpService } from './outbound-http.service';
import { closedPort } from '../../../test/utils/free-port';
import type { HttpTestServer } from '../../../test/utils/http-test-server';
import {
  failure,
  nothingReached,
  useOutboundHttp,
  type OutboundHttpFixture,
} from '../../../test/utils/outbound-http-fixture';

describe('OutboundHttpService (real servers on 127.0.0.1): limits, redirects, pinning', () => {
  let server: HttpTestServer;
  let other: HttpTestServer;
  let refused: HttpTestServer;
  let lookups: string[];
  let send: OutboundHttpFixture['send'];
  useOutboundHttp((fixture) => ({ server, other, refused, lookups, send } = fixture));
  describe('limits', () => {
    it('fails with TIMEOUT when the server never answers', async () => {
      server.handle(() => undefined);
      // Long enough for the request to reach the server on a loaded machine (200 ms once was not).
      const error = await failure(send({ url: server.url('/slow'), timeoutMs: 1000 }));
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
      const controller = new AbortController();
      // Aborted once the server holds the request (never answered), so the request is recorded within
      // this test: one aborted after a fixed delay could reach a busy server later, in the next test.
      server.handle(() => controller.abort());
      const error = await failure(send({ url: server.url(), timeoutMs: 5000, signal: controller.signal }));
      expect(error.code).toBe('TIMEOUT');
      expect(error.details).toMatchObject({ aborted: true });
      expect(server.requests).toHaveLength(1);
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
