import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { Controller, Get, Module } from '@nestjs/common';
import { Public } from '../../src/common/auth/auth-decision.decorators';
import { createTestApp, type TestApp } from '../utils/test-app';

const SLOW_MS = 600;

@Controller('test-slow')
class SlowController {
  @Get()
  @Public()
  async slow() {
    await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
    return { slow: true };
  }
}

@Module({ controllers: [SlowController] })
class SlowModule {}

interface Outcome {
  status?: number;
  headers?: IncomingHttpHeaders;
  body?: string;
  error?: string;
  reusedSocket?: boolean;
}

function get(agent: Agent, port: number, path: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode, headers: res.headers, body, reusedSocket: req.reusedSocket }),
      );
      res.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    });
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ error: error.code ?? error.message, reusedSocket: req.reusedSocket }),
    );
    req.end();
  });
}

describe('graceful shutdown on a real HTTP server with keep-alive clients', () => {
  let t: TestApp;
  let port: number;
  beforeEach(async () => {
    t = await createTestApp({ modules: [SlowModule] });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as { port: number }).port;
  });
  afterEach(() => t.close().catch(() => undefined));

  it('finishes the in-flight request, then the kept-alive socket is closed cleanly, never reset', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // Open the kept-alive socket.
      const first = await get(agent, port, '/health');
      expect(first.status).toBe(200);
      const slow = get(agent, port, '/test-slow');
      await new Promise((resolve) => setTimeout(resolve, SLOW_MS / 3));
      const closing = t.app.close();
      // Queued behind the slow one on the same (only) socket.
      const next = get(agent, port, '/health');
      const slowOutcome = await slow;
      expect(slowOutcome.status).toBe(200);
      expect(JSON.parse(slowOutcome.body!)).toEqual({ slow: true });
      expect(slowOutcome.reusedSocket).toBe(true);
      // The server tells the client not to reuse the socket while it is shutting down.
      expect(slowOutcome.headers!.connection).toBe('close');
      const nextOutcome = await next;
      // Either a clean 503 on the old socket, or a new connection that is refused (nothing was sent,
      // so a client or load balancer can retry elsewhere). Never ECONNRESET / a hang-up mid-request.
      if (nextOutcome.status !== undefined) {
        expect(nextOutcome.status).toBe(503);
        expect(nextOutcome.headers!.connection).toBe('close');
      } else {
        expect(nextOutcome).toEqual({ error: 'ECONNREFUSED', reusedSocket: false });
      }
      await closing;
    } finally {
      agent.destroy();
    }
  });

  it('idle kept-alive sockets are closed at shutdown, so the next request opens a new connection', async () => {
    const agent = new Agent({ keepAlive: true });
    try {
      // Two kept-alive sockets in the pool.
      const opened = await Promise.all([get(agent, port, '/health'), get(agent, port, '/health')]);
      expect(opened.map((o) => o.status)).toEqual([200, 200]);
      const slow = get(agent, port, '/test-slow');
      await new Promise((resolve) => setTimeout(resolve, SLOW_MS / 3));
      const closing = t.app.close();
      // Wait until the client has seen the server close the idle socket (on a loaded machine that
      // takes longer than a fixed pause), rather than racing the close with a new request.
      const deadline = Date.now() + 5000;
      while (
        Object.values(agent.freeSockets).some((list) => (list?.length ?? 0) > 0) &&
        Date.now() < deadline
      )
        await new Promise((resolve) => setTimeout(resolve, 10));
      // The idle socket was closed by the server and dropped from the pool: no reuse, no reset.
      const next = await get(agent, port, '/health');
      expect(next).toEqual({ error: 'ECONNREFUSED', reusedSocket: false });
      expect((await slow).status).toBe(200);
      await closing;
    } finally {
      agent.destroy();
    }
  });

  it('a request arriving on a busy connection during shutdown is a 503 in the error body with Connection: close', async () => {
    const open = async () => {
      const socket = connect(port, '127.0.0.1');
      const state = { received: '' };
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (state.received += chunk));
      const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      return { socket, state, ended };
    };
    const slow = await open();
    const late = await open();
    slow.socket.write('GET /test-slow HTTP/1.1\r\nHost: localhost\r\n\r\n');
    // A request whose head is still arriving when shutdown starts: the connection is not idle.
    late.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n');
    await new Promise((resolve) => setTimeout(resolve, SLOW_MS / 3));
    const closing = t.app.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    late.socket.write('\r\n');
    await Promise.all([slow.ended, late.ended, closing]);

    expect(slow.state.received).toMatch(/^HTTP\/1\.1 200 /);
    expect(slow.state.received).toMatch(/\r\nconnection: close\r\n/i);
    expect(slow.state.received.endsWith('{"slow":true}')).toBe(true);
    const late503 = late.state.received;
    expect(late503).toMatch(/^HTTP\/1\.1 503 /);
    expect(late503).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(late503.slice(late503.indexOf('\r\n\r\n') + 4))).toEqual({
      success: false,
      error: 'The service is shutting down; retry the request.',
      code: 'SHUTTING_DOWN',
      statusCode: 503,
    });
  });
});
