import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { DatabaseClient } from '../../src/database/database-client';
import { rowsOf } from '../../src/database/raw-rows';
import { TEST_ADMIN } from '../utils/test-app';
import { embeddedOnly } from '../utils/configurations';
import { startServiceProcess, type ServiceProcess } from '../utils/service-process';

embeddedOnly('embedded database durability', () => {
  const started: ServiceProcess[] = [];
  afterAll(() => {
    for (const server of started) if (server.alive) server.child.kill('SIGKILL');
  });
  const run = async (dataDir: string) => {
    const server = await startServiceProcess({ DATA_DIR: dataDir });
    started.push(server);
    const base = server.url;
    const login = await fetch(`${base}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(TEST_ADMIN),
    });
    expect(login.status).toBe(200);
    const token = ((await login.json()) as { token: string }).token;
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    return { server, call, token };
  };

  it('every acknowledged write survives SIGKILL; SIGTERM checkpoints and stops cleanly', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'fdws-durable-'));

    const first = await run(dataDir);
    const config = await first.call('POST', '/api/configs', { title: 'Durable', type: 'form', tags: [] });
    expect(config.status).toBe(201);
    const configId = config.body.id as string;
    const acknowledged: string[] = [];
    for (let i = 0; i < 40; i++) {
      const created = await first.call('POST', `/api/data/${configId}`, { n: i });
      expect(created.status).toBe(201);
      acknowledged.push(created.body.dataId);
    }
    // Concurrent writes too, then an update and a delete, all acknowledged before the kill.
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) => first.call('POST', `/api/data/${configId}`, { burst: i })),
    );
    for (const created of burst) {
      expect(created.status).toBe(201);
      acknowledged.push(created.body.dataId);
    }
    expect(
      (await first.call('PUT', `/api/data/${configId}/${acknowledged[0]}`, { n: 'edited' })).status,
    ).toBe(200);
    expect((await first.call('DELETE', `/api/data/${configId}/${acknowledged[1]}`)).status).toBe(200);
    first.server.child.kill('SIGKILL');
    expect(await first.server.exited).toBe('SIGKILL');

    const second = await run(dataDir);
    const listed = await second.call('GET', `/api/data/${configId}?limit=1000`);
    expect(listed.status).toBe(200);
    const ids = new Set((listed.body.data as { _id: string }[]).map((record) => record._id));
    expect(ids.size).toBe(acknowledged.length - 1);
    for (const id of acknowledged.slice(2)) expect(ids.has(id)).toBe(true);
    expect((await second.call('GET', `/api/data/${configId}/${acknowledged[0]}`)).body.data).toEqual({
      n: 'edited',
    });
    expect((await second.call('GET', `/api/data/${configId}/${acknowledged[1]}`)).status).toBe(404);
    const late = await second.call('POST', `/api/data/${configId}`, { late: true });
    expect(late.status).toBe(201);

    // Nest re-raises SIGTERM once its shutdown hooks (drain, checkpoint, close, unlock) have run.
    second.server.child.kill('SIGTERM');
    expect(await second.server.exited).toBe('SIGTERM');
    expect(existsSync(join(dataDir, 'pglite.lock'))).toBe(false);

    // After a clean stop the database opens with nothing to replay and holds every write.
    const reopened = await DatabaseClient.open({ databaseUrl: null, dataDir, poolSize: 1 });
    try {
      const [row] = rowsOf(
        await reopened.db.execute(
          sql`select count(*)::int as n, current_setting('fsync') as fsync, current_setting('wal_sync_method') as method
              from data_records where is_active`,
        ),
      );
      expect(row).toEqual({ n: acknowledged.length, fsync: 'on', method: 'fsync' });
    } finally {
      await reopened.close();
    }
  }, 180_000);

  it('an acknowledged upload survives SIGKILL with every byte (the filesystem store beside the database)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'fdws-durable-files-'));
    const first = await run(dataDir);
    const config = await first.call('POST', '/api/configs', {
      title: 'Durable files',
      type: 'form',
      tags: [],
      schema: { type: 'object', properties: { file: { type: 'string', format: 'attachment' } } },
    });
    expect(config.status).toBe(201);
    const configId = config.body.id as string;
    const bytes = randomBytes(700_000);
    const uploaded = await fetch(`${first.server.url}/api/data/${configId}/attachments?filename=a.bin`, {
      method: 'POST',
      headers: { authorization: `Bearer ${first.token}`, 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    expect(uploaded.status).toBe(201);
    const attachmentId = ((await uploaded.json()) as { attachmentId: string }).attachmentId;
    const record = await first.call('POST', `/api/data/${configId}`, { file: attachmentId });
    expect(record.status).toBe(201);
    first.server.child.kill('SIGKILL');
    expect(await first.server.exited).toBe('SIGKILL');

    const second = await run(dataDir);
    const url = `/api/data/${configId}/${record.body.dataId}/attachments/${attachmentId}`;
    const download = await fetch(`${second.server.url}${url}`, {
      headers: { authorization: `Bearer ${second.token}` },
    });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    expect(readdirSync(join(dataDir, 'attachments'))).toHaveLength(1);
    second.server.child.kill('SIGTERM');
    expect(await second.server.exited).toBe('SIGTERM');
  }, 120_000);
});
