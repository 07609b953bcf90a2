import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { DatabaseClient, pgliteDirectory } from '../../src/database/database-client';
import { rowsOf } from '../../src/database/raw-rows';
import { embeddedOnly } from '../utils/configurations';

const sharedBuffers = async (client: DatabaseClient) =>
  rowsOf(await client.db.execute(sql`select current_setting('shared_buffers') as value`))[0]?.value;

embeddedOnly('embedded database shared buffers', () => {
  it('a new data directory is created with 32MB of shared buffers, and an older one starts with them too', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'fdws-buffers-'));
    const conf = join(pgliteDirectory(dataDir), 'postgresql.conf');

    const created = await DatabaseClient.open({ databaseUrl: null, dataDir, poolSize: 1 });
    try {
      expect(await sharedBuffers(created)).toBe('32MB');
    } finally {
      await created.close();
    }
    expect(readFileSync(conf, 'utf8')).toMatch(/^shared_buffers = 32MB\b/m);

    // A directory created with PostgreSQL's default (as before) still starts with the smaller pool.
    writeFileSync(
      conf,
      readFileSync(conf, 'utf8').replace(/^shared_buffers = 32MB/m, 'shared_buffers = 128MB'),
    );
    const older = await DatabaseClient.open({ databaseUrl: null, dataDir, poolSize: 1 });
    try {
      expect(await sharedBuffers(older)).toBe('32MB');
    } finally {
      await older.close();
    }
  }, 120_000);
});
