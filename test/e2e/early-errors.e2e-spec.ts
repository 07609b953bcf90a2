import { connect } from 'node:net';
import { errorBody } from '../utils/api-error';
import { useAppSuite } from '../utils/app-suite';

/** Sends `raw` bytes on a new connection and gives back everything the server wrote before closing. */
function exchange(port: number, raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.write(raw);
  });
}

function parse(answer: string): { statusLine: string; headers: string; body: unknown } {
  const [head, body] = answer.split('\r\n\r\n');
  const [statusLine, ...headers] = head.split('\r\n');
  return { statusLine, headers: headers.join('\n').toLowerCase(), body: JSON.parse(body) };
}

/**
 * Requests refused before any route or hook sees them, by Node's HTTP parser (over a real socket:
 * `inject` skips the parser) or by Fastify's router, still get the service's one error body.
 */
describe("requests refused by Node's HTTP parser or Fastify's router", () => {
  const s = useAppSuite({ admin: false, seed: 'once', listen: true });

  it('headers over the size limit: 431 HEADERS_TOO_LARGE in the error body, and the connection closes', async () => {
    const answer = parse(
      await exchange(s.port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    expect(answer.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(answer.headers).toContain('content-type: application/json; charset=utf-8');
    expect(answer.headers).toContain('connection: close');
    expect(answer.body).toEqual(
      errorBody(431, { code: 'HEADERS_TOO_LARGE', error: "The request's headers are too large." }),
    );
  });

  it('a request line that is not HTTP: 400 BAD_REQUEST in the error body', async () => {
    const answer = parse(await exchange(s.port, 'NOT HTTP AT ALL\r\n\r\n'));
    expect(answer.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(answer.body).toEqual(errorBody(400, { code: 'BAD_REQUEST', error: 'The request is not valid.' }));
  });

  it('a URL the router cannot decode: 400 BAD_REQUEST; a path parameter over 100 characters: 414 URI_TOO_LONG', async () => {
    const badUrl = await s.t.request({ method: 'GET', url: '/api/configs/%zz' });
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.headers['x-request-id']).toEqual(expect.any(String));
    expect(badUrl.json()).toEqual(
      errorBody(400, { code: 'BAD_REQUEST', error: 'The request is not valid.' }),
    );
    const longParam = await s.t.request({ method: 'GET', url: `/api/configs/${'a'.repeat(101)}` });
    expect(longParam.statusCode).toBe(414);
    expect(longParam.json()).toEqual(
      errorBody(414, { code: 'URI_TOO_LONG', error: "The request's address is too long." }),
    );
  });

  it('an HTTP/1.1 request without Host: 400 BAD_REQUEST; an Expect other than 100-continue: 417, in the error body', async () => {
    const noHost = parse(await exchange(s.port, 'GET /health HTTP/1.1\r\n\r\n'));
    expect(noHost.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(noHost.headers).toContain('connection: close');
    expect(noHost.body).toEqual(errorBody(400, { code: 'BAD_REQUEST', error: 'The request is not valid.' }));
    const teapot = parse(await exchange(s.port, 'GET /health HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n'));
    expect(teapot.statusLine).toBe('HTTP/1.1 417 Expectation Failed');
    expect(teapot.headers).toContain('content-type: application/json; charset=utf-8');
    expect(teapot.body).toEqual(
      errorBody(417, {
        code: 'EXPECTATION_FAILED',
        error: "The request's Expect header asks for something this server does not do.",
      }),
    );
    // HTTP/1.0 needs no Host.
    const old = await exchange(s.port, 'GET /health HTTP/1.0\r\n\r\n');
    expect(old.startsWith('HTTP/1.1 200 OK')).toBe(true);
  });

  it('a request refused before its body arrived closes its connection: the next request is not swallowed', async () => {
    // A 415 answered at the first byte of a body announced as 1 MB; the rest never comes.
    const answer = await exchange(
      s.port,
      'POST /api/configs HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 1000000\r\n\r\nx',
    );
    const refused = parse(answer);
    expect(refused.statusLine).toBe('HTTP/1.1 415 Unsupported Media Type');
    expect(refused.headers).toContain('connection: close');
    expect(refused.body).toMatchObject({ statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('the server goes on answering afterwards', async () => {
    expect((await s.t.request({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    const answer = await exchange(s.port, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(answer.startsWith('HTTP/1.1 200 OK')).toBe(true);
  });
});
