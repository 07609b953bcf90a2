import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TEST_JWT_SECRET } from '../utils/test-app';
import { embeddedOnly } from '../utils/configurations';
import { freePort } from '../utils/free-port';

const root = resolve(__dirname, '../..');

interface Server {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the exit code (or signal). */
  exited: Promise<number | string>;
}

function start(dataDir: string, port: number): Server {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', 'src/main.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      JWT_SECRET: TEST_JWT_SECRET,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((done) =>
    child.on('exit', (code, signal) => done(code ?? signal ?? 'unknown')),
  );
  return { child, output: () => output, exited };
}

/** Waits until the server logs that it listens, or fails with its output when it exits first. */
async function listening(server: Server): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!server.output().includes('Listening on http://')) {
    if (server.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`server did not start:\n${server.output()}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
}

embeddedOnly('one embedded database per DATA_DIR', () => {
  const started: Server[] = [];
  afterAll(() => {
    for (const server of started) if (server.child.exitCode === null) server.child.kill('SIGKILL');
  });
  const run = (dataDir: string, port: number) => {
    const server = start(dataDir, port);
    started.push(server);
    return server;
  };

  it('a second process on the same DATA_DIR refuses to start; a stale lock is recovered; a clean stop releases it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'fdws-lock-'));
    const lock = join(dataDir, 'pglite.lock');
    const port = await freePort();

    const first = run(dataDir, port);
    await listening(first);
    expect(readFileSync(lock, 'utf8').trim()).toBe(String(first.child.pid));
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);

    const second = run(dataDir, await freePort());
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(`is in use by process ${first.child.pid}`);
    expect(second.output()).not.toContain('Listening on');
    // The first one still serves and still holds the lock.
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    expect(readFileSync(lock, 'utf8').trim()).toBe(String(first.child.pid));

    // Killed without a chance to clean up: the lock file stays behind, naming a dead process.
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(existsSync(lock)).toBe(true);

    const thirdPort = await freePort();
    const third = run(dataDir, thirdPort);
    await listening(third);
    expect(readFileSync(lock, 'utf8').trim()).toBe(String(third.child.pid));
    expect((await fetch(`http://127.0.0.1:${thirdPort}/health`)).status).toBe(200);

    // A clean shutdown removes the lock.
    third.child.kill('SIGTERM');
    await third.exited;
    expect(existsSync(lock)).toBe(false);
  }, 180_000);
});
