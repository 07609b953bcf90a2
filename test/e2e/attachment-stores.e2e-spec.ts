import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, statSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sql } from 'drizzle-orm';
import { AttachmentCleanup } from '../../src/attachments/attachment-cleanup';
import { rowsOf } from '../../src/database/raw-rows';
import { PNG, sha256 } from '../factories/attachment-files';
import { postRecord } from '../utils/api-requests';
import { useAppSuite } from '../utils/app-suite';
import { countRows } from '../utils/row-counts';
import { attachmentStoreOf, storedContents } from '../utils/stored-contents';

const FORM_SCHEMA = {
  type: 'object',
  properties: {
    photo: { type: 'string', format: 'attachment', 'x-mediaTypes': ['image/*'] },
    documents: { type: 'array', items: { type: 'string', format: 'attachment' } },
  },
};

/**
 * Both attachment stores chosen explicitly (ATTACHMENT_STORE), so each runs in every configuration:
 * `auto` picks the filesystem on PGlite and the database on PostgreSQL, and the other suites use it.
 */
describe.each(['database', 'filesystem'] as const)('attachment store: %s', (store) => {
  const s = useAppSuite({
    users: 1,
    env: { ATTACHMENT_STORE: store },
    forms: [{ title: 'Files', schema: FORM_SCHEMA, computedRules: [], validationRules: [] }],
  });
  const upload = (bytes: Buffer, field = 'documents') =>
    s.t.request({
      method: 'POST',
      url: `/api/data/${s.configId}/attachments?field=${field}&filename=f.bin`,
      token: s.user.token,
      headers: { 'content-type': 'application/octet-stream' },
      payload: bytes,
    });
  const counts = async () => ({
    ...(await countRows(s.t, { blobs: 'attachment_blobs' })),
    stored: await storedContents(s.t),
  });

  it('is the store the app uses', () => {
    expect(attachmentStoreOf(s.t)).toBe(store);
  });

  it('stores a multi-chunk file once, reads it whole and by ranges, and stores nothing for a refusal', async () => {
    const text = Buffer.from(randomBytes(450_000).toString('base64'));
    const first = await upload(text);
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ size: text.length, sha256: sha256(text), mediaType: 'text/plain' });
    expect((await upload(text)).statusCode).toBe(201);
    expect(await counts()).toEqual({ blobs: 1, stored: 1 });

    const refused = await upload(text, 'photo');
    expect(refused.statusCode).toBe(415);
    expect(refused.json()).toMatchObject({ code: 'ATTACHMENT_TYPE_NOT_ALLOWED' });
    expect(await counts()).toEqual({ blobs: 1, stored: 1 });

    const attachmentId = first.json().attachmentId as string;
    const dataId = (await postRecord(s.t, s.user.token, s.configId, { documents: [attachmentId] })).json()
      .dataId as string;
    const url = `/api/data/${s.configId}/${dataId}/attachments/${attachmentId}`;
    const whole = await s.t.request({ method: 'GET', url, token: s.user.token });
    expect(whole.statusCode).toBe(200);
    expect(whole.rawPayload.equals(text)).toBe(true);
    const across = await s.t.request({
      method: 'GET',
      url,
      token: s.user.token,
      headers: { range: 'bytes=262000-530000' },
    });
    expect(across.statusCode).toBe(206);
    expect(across.rawPayload.equals(text.subarray(262000, 530001))).toBe(true);
  });

  if (store === 'filesystem') {
    it("names files by blob id (never the client's filename), readable by the service's user only", async () => {
      const uploaded = (await upload(PNG, 'photo')).json();
      const root = resolve(s.t.config.attachmentDir);
      const [blob] = rowsOf(
        await s.t.database.client.db.execute(
          sql`select blob_id as id from attachments where id = ${uploaded.attachmentId}::uuid`,
        ),
      ) as { id: string }[];
      const files = readdirSync(root, { recursive: true, withFileTypes: true }).filter((entry) =>
        entry.isFile(),
      );
      expect(files.map((file) => join(file.parentPath, file.name))).toEqual([
        join(root, blob.id.slice(0, 2), blob.id),
      ]);
      expect(statSync(join(root, blob.id.slice(0, 2), blob.id)).mode & 0o777).toBe(0o600);
    });

    it('the cleanup removes bytes whose blob row is gone (a crash between the two deletes), and nothing else', async () => {
      const kept = (await upload(PNG, 'photo')).json();
      expect(kept.attachmentId).toEqual(expect.any(String));
      const root = resolve(s.t.config.attachmentDir);
      const orphan = randomUUID();
      mkdirSync(join(root, orphan.slice(0, 2)), { recursive: true });
      writeFileSync(join(root, orphan.slice(0, 2), orphan), 'left by a crash');
      writeFileSync(join(root, 'README.txt'), 'not a blob: left alone');
      expect(await storedContents(s.t)).toBe(2);
      // The upload is recent: only the orphan goes.
      expect(await s.t.app.get(AttachmentCleanup).purge()).toBe(1);
      expect(existsSync(join(root, orphan.slice(0, 2), orphan))).toBe(false);
      expect(existsSync(join(root, 'README.txt'))).toBe(true);
      expect(await storedContents(s.t)).toBe(1);
    });
  }
});
