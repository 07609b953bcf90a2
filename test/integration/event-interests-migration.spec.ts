import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { DatabaseClient, MIGRATIONS_FOLDER } from '../../src/database/database-client';
import { applyMigrations } from '../../src/database/migrator';
import { rowsOf } from '../../src/database/raw-rows';
import { embeddedOnly } from '../utils/configurations';

/** The migrations up to and including `tag`, as a folder of their own (an older release's). */
function migrationsUpTo(tag: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'fdws-migrations-'));
  cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
  const last = journal.entries.findIndex((entry) => entry.tag === tag);
  if (last < 0) throw new Error(`no migration ${tag}`);
  journal.entries = journal.entries.slice(0, last + 1);
  writeFileSync(journalPath, JSON.stringify(journal));
  return folder;
}

/**
 * Events are written only when somebody takes them (domain_event_interests). Upgrading a database
 * that already has webhook subscriptions or triggers must not drop their events before the first
 * reconciliation; a new database wants none.
 */
embeddedOnly('event interests when upgrading', () => {
  const clients: DatabaseClient[] = [];
  let older: string;
  beforeAll(() => {
    older = migrationsUpTo('0014_record_write_functions');
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    rmSync(older, { recursive: true, force: true });
  });

  const freshDatabase = async () => {
    const client = await DatabaseClient.forPglite(await PGlite.create());
    clients.push(client);
    return client;
  };
  const interests = async (client: DatabaseClient) =>
    rowsOf(
      await client.db.execute(sql`select type, config_id from domain_event_interests order by type`),
    ).map((row) => `${String(row.type)} ${row.config_id === null ? 'any' : 'one'}`);

  it('an installation with a webhook subscription wants every event after the upgrade', async () => {
    const client = await freshDatabase();
    await applyMigrations(client.db, older);
    await client.db.execute(sql`insert into webhook_subscriptions (url, events, secret)
      values ('https://hooks.example.com/in', array['record.created'], 'whsec_x')`);
    await applyMigrations(client.db, MIGRATIONS_FOLDER);
    expect(await interests(client)).toEqual([
      'record.created any',
      'record.deleted any',
      'record.restored any',
      'record.updated any',
      'workflow.run.finished any',
    ]);
  });

  it('an installation with neither subscriptions nor triggers wants none', async () => {
    const client = await freshDatabase();
    await applyMigrations(client.db, older);
    await applyMigrations(client.db, MIGRATIONS_FOLDER);
    expect(await interests(client)).toEqual([]);
  });
});
