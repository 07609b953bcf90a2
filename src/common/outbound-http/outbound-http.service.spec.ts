import { Readable } from 'node:stream';
import type { HttpTestServer } from '../../../test/utils/http-test-server';
import {
  failure,
  nothingReached,
  useOutboundHttp,
  type OutboundHttpFixture,
} from '../../../test/utils/outbound-http-fixture';

describe('OutboundHttpService (real servers on 127.0.0.1): destinations, URLs, answers', () => {
  let server: HttpTestServer;
  let refused: HttpTestServer;
  let lookups: string[];
  let send: OutboundHttpFixture['send'];
  useOutboundHttp((fixture) => ({ server, refused, lookups, send } = fixture));
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

  describe('streamed bodies', () => {
    const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
    /** A body in 64 KB pieces that counts its openings and whether each stream was ended or destroyed. */
    const streamed = () => {
      const streams: Readable[] = [];
      return {
        streams,
        body: {
          length: bytes.length,
          open: async () => {
            const stream = Readable.from(
              Array.from({ length: Math.ceil(bytes.length / 65_536) }, (_, i) =>
                bytes.subarray(i * 65_536, (i + 1) * 65_536),
              ),
            );
            streams.push(stream);
            return stream;
          },
        },
      };
    };

    it('sends the bytes with their Content-Length (not chunked), replacing one the caller gave', async () => {
      const { body, streams } = streamed();
      const response = await send({
        url: server.url('/upload'),
        method: 'POST',
        headers: { 'content-type': 'application/pdf', 'Content-Length': '1' },
        body,
      });
      expect(response.status).toBe(200);
      const [received] = server.requests;
      expect(received.headers).toMatchObject({
        'content-type': 'application/pdf',
        'content-length': String(bytes.length),
      });
      expect(received.headers['transfer-encoding']).toBeUndefined();
      expect(received.bytes.equals(bytes)).toBe(true);
      expect(streams.map((stream) => stream.destroyed)).toEqual([true]);
    });

    it('opens the body again for a 307 redirect that keeps it, and not for a 303 that drops it', async () => {
      server.handle((req, res) => {
        const redirects: Record<string, [number, string]> = {
          '/start': [307, '/again'],
          '/again': [303, '/done'],
        };
        const to = redirects[req.url ?? ''];
        res.writeHead(to ? to[0] : 200, to ? { location: to[1] } : {});
        res.end();
      });
      const { body, streams } = streamed();
      await send({ url: server.url('/start'), method: 'PUT', body });
      expect(server.requests.map((r) => [r.method, r.url, r.bytes.length])).toEqual([
        ['PUT', '/start', bytes.length],
        ['PUT', '/again', bytes.length],
        ['GET', '/done', 0],
      ]);
      expect(server.requests[1].bytes.equals(bytes)).toBe(true);
      expect(streams).toHaveLength(2);
    });

    it('throws what opening the body threw, after the destination was checked, sending nothing', async () => {
      const gone = new Error('the file is gone');
      const error = await send({
        url: server.url('/upload'),
        method: 'POST',
        body: { length: 1, open: () => Promise.reject(gone) },
      }).catch((e: unknown) => e);
      expect(error).toBe(gone);
      expect(server.requests).toHaveLength(0);
    });

    it('a source failing mid-body fails the request', async () => {
      const error = await failure(
        send({
          url: server.url('/upload'),
          method: 'POST',
          body: {
            length: 10_000,
            open: async () =>
              Readable.from(
                (async function* () {
                  yield Buffer.alloc(1000);
                  throw new Error('blob read failed');
                })(),
              ),
          },
        }),
      );
      expect(error.code).toBe('REQUEST_FAILED');
    });
  });
});
