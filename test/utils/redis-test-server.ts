import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A private redis-server (by default without persistence) that a test can stop and start again. */
export interface RedisTestServer {
  url: string;
  /** Kills the server (SIGKILL): whatever it held is gone. */
  stop(): Promise<void>;
  /** Starts the server again on the same port: empty, unless persistent. */
  start(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('error', () => resolve(false));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.write('PING\r\n');
  });
}

/** `persistent`: an append-only file synced at every write, so a restarted server has its data back. */
export async function startRedisTestServer(options: { persistent?: boolean } = {}): Promise<RedisTestServer> {
  const port = await freePort();
  const persistence = options.persistent
    ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', mkdtempSync(join(tmpdir(), 'fdws-redis-'))]
    : ['--appendonly', 'no'];
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(port))) {
      if (Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const stop = async () => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    await new Promise((resolve) => {
      running.once('exit', resolve);
      running.kill('SIGKILL');
    });
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, start, stop };
}
