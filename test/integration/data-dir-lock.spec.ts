import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { embeddedOnly } from '../utils/configurations';
import { listening, processStore, spawnServiceProcess, type ServiceProcess } from '../utils/service-process';

embeddedOnly('one embedded database per DATA_DIR', () => {
  const started: ServiceProcess[] = [];
  afterAll(() => {
    for (const server of started) if (server.alive) server.child.kill('SIGKILL');
  });
  // As this test always ran: no admin to seed, the service's own request limits.
  const run = async (dataDir: string) => {
    const server = await spawnServiceProcess({
      DATA_DIR: dataDir,
      ADMIN_EMAIL: undefined,
      ADMIN_PASSWORD: undefined,
      THROTTLE_LIMIT: undefined,
      THROTTLE_AUTH_LIMIT: undefined,
    });
    started.push(server);
    return server;
  };

  it('a second process on the same DATA_DIR refuses to start; a stale lock is recovered; a clean stop releases it', async () => {
    // Its cluster made already: the lock is what is tested here, not the first start.
    const dataDir = (await processStore('fdws-lock-')).env.DATA_DIR;
    const lock = join(dataDir, 'pglite.lock');

    const first = await run(dataDir);
    await listening(first);
    expect(readFileSync(lock, 'utf8').trim()).toBe(String(first.child.pid));
    const health = await fetch(`${first.url}/health`);
    expect(health.status).toBe(200);

    const second = await run(dataDir);
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(`is in use by process ${first.child.pid}`);
    expect(second.output()).not.toContain('Listening on');
    // The first one still serves and still holds the lock.
    expect((await fetch(`${first.url}/health`)).status).toBe(200);
    expect(readFileSync(lock, 'utf8').trim()).toBe(String(first.child.pid));

    // Killed without a chance to clean up: the lock file stays behind, naming a dead process.
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(existsSync(lock)).toBe(true);

    const third = await run(dataDir);
    await listening(third);
    expect(readFileSync(lock, 'utf8').trim()).toBe(String(third.child.pid));
    expect((await fetch(`${third.url}/health`)).status).toBe(200);

    // A clean shutdown removes the lock.
    third.child.kill('SIGTERM');
    await third.exited;
    expect(existsSync(lock)).toBe(false);
  }, 180_000);
});
