import { randomBytes } from 'node:crypto';
import JSZip from 'jszip';
import { AttachmentCleanup } from '../../src/attachments/attachment-cleanup';
import { RecordTrashPurge } from '../../src/data/record-trash-purge';
import { PDF, PNG, sha256, uploadAnswer } from '../factories/attachment-files';
import { createSite } from '../factories/site.factory';
import { createUser } from '../factories/user.factory';
import { postConfig, postRecord } from '../utils/api-requests';
import { useAppSuite } from '../utils/app-suite';
import { countRows } from '../utils/row-counts';
import { attachmentStoreOf, storedContents } from '../utils/stored-contents';
import { createTestApp } from '../utils/test-app';
import { dataSheet } from '../utils/xlsx';

const FORM_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    photo: { type: 'string', format: 'attachment', 'x-mediaTypes': ['image/*'], 'x-maxSize': 100_000 },
    documents: { type: 'array', items: { type: 'string', format: 'attachment' }, maxItems: 3 },
    contract: { type: 'string', format: 'attachment', 'x-mediaTypes': ['application/pdf'] },
  },
};

describe('attachments: files in submissions', () => {
  const s = useAppSuite({
    users: 2,
    forms: [{ title: 'Claims', schema: FORM_SCHEMA, computedRules: [], validationRules: [] }],
  });
  /** The second user, whose uploads are not the first one's. */
  const other = () => s.users[1];

  const upload = (
    bytes: Buffer,
    options: { field?: string; filename?: string; token?: string; host?: string; contentType?: string } = {},
  ) =>
    s.t.request({
      method: 'POST',
      url: `/api/data/${s.configId}/attachments?field=${options.field ?? 'documents'}&filename=${encodeURIComponent(options.filename ?? 'file.bin')}`,
      token: options.token ?? s.user.token,
      headers: {
        'content-type': options.contentType ?? 'application/octet-stream',
        ...(options.host && { host: options.host }),
      },
      payload: bytes,
    });
  /** Uploads, blobs, and blobs whose bytes are in the store (files, or chunk rows). */
  const counts = async () => ({
    ...(await countRows(s.t, { attachments: 'attachments', blobs: 'attachment_blobs' })),
    stored: await storedContents(s.t),
  });
  const createRecord = (data: Record<string, unknown>, token = s.user.token, host?: string) =>
    postRecord(s.t, token, s.configId, data, host ? { host } : undefined);
  /** GET `url` as the first user, or as `token` on `host`. */
  const get = (url: string, options: { range?: string; token?: string; host?: string } = {}) =>
    s.t.request({
      method: 'GET',
      url,
      token: options.token ?? s.user.token,
      headers: {
        ...(options.range && { range: options.range }),
        ...(options.host && { host: options.host }),
      },
    });
  const exported = (format: string) =>
    s.t.request({ method: 'GET', url: `/api/data/${s.configId}/export?format=${format}`, token: s.admin });

  it('refuses an invalid attachment declaration with a 422 naming the field', async () => {
    const response = await postConfig(s.t, s.admin, {
      title: 'Bad',
      type: 'form',
      schema: {
        type: 'object',
        properties: {
          scan: { type: 'string', format: 'attachment', 'x-maxSize': -1, 'x-mediaTypes': ['not a type'] },
          nested: { type: 'object', properties: { file: { type: 'string', format: 'attachment' } } },
        },
      },
    });
    expect(response.statusCode).toBe(422);
    expect(
      response
        .json()
        .validationErrors.map((e: { field: string }) => e.field)
        .sort(),
    ).toEqual([
      'schema.properties.nested',
      'schema.properties.scan.x-maxSize',
      'schema.properties.scan.x-mediaTypes',
    ]);
  });

  it("types the attachment routes in the form's own OpenAPI document", async () => {
    const document = (
      await s.t.request({
        method: 'GET',
        url: `/api/configs/${s.configId}/openapi.json`,
        token: s.user.token,
      })
    ).json();
    const uploadRoute = document.paths['/api/data/{configId}/attachments'].post;
    expect(uploadRoute.parameters[0]).toEqual({
      name: 'field',
      in: 'query',
      required: true,
      schema: { enum: ['photo', 'documents', 'contract'] },
    });
    expect(document.paths['/api/data/{configId}/{dataId}/attachments/{attachmentId}'].get.operationId).toBe(
      'downloadAttachment',
    );
    expect(document.components.schemas.Record.properties.attachments).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Attachment' },
    });
    expect(document.components.schemas.FormData.properties.photo.format).toBe('attachment');
  });

  it('uploads, links, shows and streams a file, whole and by ranges', async () => {
    const uploaded = await upload(PNG, { field: 'photo', filename: '../../etc/ré sumé.png' });
    expect(uploaded.statusCode).toBe(201);
    const attachment = uploaded.json();
    expect(attachment).toEqual(
      uploadAnswer(PNG, { field: 'photo', filename: 'ré sumé.png', mediaType: 'image/png' }),
    );

    const created = await createRecord({ name: 'Ann', photo: attachment.attachmentId });
    expect(created.statusCode).toBe(201);
    const dataId = created.json().dataId;
    const url = `/api/data/${s.configId}/${dataId}/attachments/${attachment.attachmentId}`;
    const read = await get(`/api/data/${s.configId}/${dataId}`);
    expect(read.json().attachments).toEqual([{ ...attachment, url }]);

    const whole = await get(url);
    expect(whole.statusCode).toBe(200);
    expect(whole.rawPayload.equals(PNG)).toBe(true);
    expect(whole.headers).toMatchObject({
      'content-type': 'image/png',
      'content-length': String(PNG.length),
      'content-disposition': `attachment; filename="r? sum?.png"; filename*=UTF-8''r%C3%A9%20sum%C3%A9.png`,
      'x-content-type-options': 'nosniff',
      etag: `"${sha256(PNG)}"`,
      'accept-ranges': 'bytes',
    });

    const part = await get(url, { range: 'bytes=1-3' });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 1-3/${PNG.length}`);
    expect(part.body).toBe('PNG');
    const past = await get(url, { range: `bytes=${PNG.length}-` });
    expect(past.statusCode).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${PNG.length}`);
    expect(past.json().code).toBe('RANGE_NOT_SATISFIABLE');
  });

  it('exports the files of attachment fields as name and URL in CSV and XLSX cells', async () => {
    const a = (await upload(PDF, { filename: 'a.pdf' })).json();
    const b = (await upload(PNG, { filename: 'b.png' })).json();
    const dataId = (await createRecord({ name: 'Ann', documents: [a.attachmentId, b.attachmentId] })).json()
      .dataId;
    const url = (id: string) => `/api/data/${s.configId}/${dataId}/attachments/${id}`;
    const cell = `a.pdf <${url(a.attachmentId)}>\nb.png <${url(b.attachmentId)}>`;
    const csv = await exported('csv');
    expect(csv.statusCode).toBe(200);
    expect(csv.body.split('\n')[0]).toBe('id,createdAt,name,documents');
    expect(csv.body).toContain(`,Ann,"${cell}"`);
    const sheet = await dataSheet(await exported('excel'));
    expect(sheet.getRow(2).getCell(4).value).toBe(cell);
  });

  it('exports a ZIP of records.json and every file, byte for byte', async () => {
    const text = Buffer.from(randomBytes(300_000).toString('base64'));
    const a = (await upload(text, { filename: 'notes.txt' })).json();
    const b = (await upload(PNG, { field: 'photo', filename: 'b.png' })).json();
    const first = (await createRecord({ name: 'Ann', documents: [a.attachmentId] })).json().dataId;
    const second = (await createRecord({ name: 'Bob', photo: b.attachmentId })).json().dataId;
    const response = await exported('zip');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/zip');
    expect(response.headers['content-disposition']).toMatch(/\.zip"/);
    const zip = await JSZip.loadAsync(response.rawPayload);
    expect(
      Object.keys(zip.files)
        .filter((name) => !zip.files[name].dir)
        .sort(),
    ).toEqual(
      [
        'records.json',
        `files/${first}/${a.attachmentId}/notes.txt`,
        `files/${second}/${b.attachmentId}/b.png`,
      ].sort(),
    );
    const records = JSON.parse(await zip.file('records.json')!.async('string'));
    expect(records.map((r: { data: { name: string } }) => r.data.name).sort()).toEqual(['Ann', 'Bob']);
    const notes = await zip.file(`files/${first}/${a.attachmentId}/notes.txt`)!.async('nodebuffer');
    expect(notes.equals(text)).toBe(true);
    const png = await zip.file(`files/${second}/${b.attachmentId}/b.png`)!.async('nodebuffer');
    expect(png.equals(PNG)).toBe(true);
  });

  it('streams ranges across chunk boundaries of a multi-chunk file byte for byte', async () => {
    const text = Buffer.from(randomBytes(500_000).toString('base64').slice(0, 600_000));
    const uploaded = await upload(text, { filename: 'big.txt' });
    expect(uploaded.json()).toMatchObject({
      mediaType: 'text/plain',
      size: text.length,
      sha256: sha256(text),
    });
    // Three chunks in the database store (256 KB each), one file in the filesystem store.
    const pieces =
      attachmentStoreOf(s.t) === 'database'
        ? (await countRows(s.t, { chunks: 'attachment_blob_chunks' })).chunks
        : await storedContents(s.t);
    expect(pieces).toBe(attachmentStoreOf(s.t) === 'database' ? 3 : 1);
    const dataId = (await createRecord({ documents: [uploaded.json().attachmentId] })).json().dataId;
    const url = `/api/data/${s.configId}/${dataId}/attachments/${uploaded.json().attachmentId}`;
    expect((await get(url)).rawPayload.equals(text)).toBe(true);
    const across = await get(url, { range: 'bytes=262000-530000' });
    expect(across.statusCode).toBe(206);
    expect(across.rawPayload.equals(text.subarray(262000, 530001))).toBe(true);
    const tail = await get(url, { range: 'bytes=-10' });
    expect(tail.rawPayload.equals(text.subarray(text.length - 10))).toBe(true);
  });

  it('stores the same bytes once', async () => {
    const first = (await upload(PDF, { filename: 'a.pdf' })).json();
    const second = (await upload(PDF, { filename: 'b.pdf', token: other().token })).json();
    expect(second.attachmentId).not.toBe(first.attachmentId);
    expect(second.sha256).toBe(first.sha256);
    expect(await counts()).toEqual({ attachments: 2, blobs: 1, stored: 1 });
  });

  it('takes the type from the bytes: a PNG named .pdf is refused by a PDF field and stored as PNG elsewhere', async () => {
    const namedPdf = { filename: 'contract.pdf', contentType: 'application/pdf' };
    const refused = await upload(PNG, { field: 'contract', ...namedPdf });
    expect(refused.statusCode).toBe(415);
    expect(refused.json()).toMatchObject({
      code: 'ATTACHMENT_TYPE_NOT_ALLOWED',
      details: { mediaType: 'image/png' },
    });
    expect(await counts()).toEqual({ attachments: 0, blobs: 0, stored: 0 });
    const stored = await upload(PNG, { field: 'documents', ...namedPdf });
    expect(stored.json()).toMatchObject({ mediaType: 'image/png', filename: 'contract.pdf' });
    const pdf = await upload(PDF, { field: 'contract', filename: 'contract.pdf' });
    expect(pdf.json()).toMatchObject({ mediaType: 'application/pdf' });
  });

  it('a text opening with a bitmap signature is text, so an image field refuses it', async () => {
    const text = Buffer.from('BMW and Audi sales by month\n');
    const refused = await upload(text, { field: 'photo', filename: 'sales.bmp', contentType: 'image/bmp' });
    expect(refused.statusCode).toBe(415);
    expect(refused.json()).toMatchObject({
      code: 'ATTACHMENT_TYPE_NOT_ALLOWED',
      details: { mediaType: 'text/plain' },
    });
    expect(await counts()).toEqual({ attachments: 0, blobs: 0, stored: 0 });
  });

  it("refuses a file over the field's size, an empty one and an unknown field, storing nothing", async () => {
    const big = Buffer.concat([PNG, Buffer.alloc(100_001)]);
    const tooLarge = await upload(big, { field: 'photo' });
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json()).toMatchObject({ code: 'ATTACHMENT_TOO_LARGE', details: { limit: 100_000 } });
    expect((await upload(Buffer.alloc(0))).json()).toMatchObject({
      statusCode: 400,
      code: 'ATTACHMENT_EMPTY',
    });
    const unknown = await upload(PNG, { field: 'name' });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json()).toMatchObject({
      code: 'ATTACHMENT_FIELD_UNKNOWN',
      details: { attachmentFields: ['photo', 'documents', 'contract'] },
    });
    expect(await counts()).toEqual({ attachments: 0, blobs: 0, stored: 0 });
  });

  it("links only the caller's own uploads, in the field they were made for, once", async () => {
    const others = (await upload(PDF, { token: other().token })).json();
    const refused = await createRecord({ documents: [others.attachmentId] });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({
      code: 'ATTACHMENT_NOT_LINKABLE',
      validationErrors: [
        {
          field: 'documents',
          rule: 'attachment',
          message: `${others.attachmentId} is not an upload of yours for this form`,
        },
      ],
    });
    const photo = (await upload(PNG, { field: 'photo' })).json();
    const wrongField = await createRecord({ documents: [photo.attachmentId] });
    expect(wrongField.json().validationErrors[0].message).toBe(
      `${photo.attachmentId} was uploaded for the field "photo"`,
    );
    expect((await get(`/api/data/${s.configId}?limit=10`, { token: s.admin })).json().total).toBe(0);

    const first = await createRecord({ photo: photo.attachmentId });
    expect(first.statusCode).toBe(201);
    const again = await createRecord({ photo: photo.attachmentId });
    expect(again.json().validationErrors[0].message).toBe(`${photo.attachmentId} belongs to another record`);
    // An admin may link anyone's upload.
    expect((await createRecord({ documents: [others.attachmentId] }, s.admin)).statusCode).toBe(201);
  });

  it('PATCH and PUT relink: a dropped file is released, a kept one stays', async () => {
    const a = (await upload(PDF, { filename: 'a.pdf' })).json();
    const b = (await upload(PNG, { filename: 'b.png' })).json();
    const dataId = (await createRecord({ documents: [a.attachmentId] })).json().dataId;
    const patched = await s.t.request({
      method: 'PATCH',
      url: `/api/data/${s.configId}/${dataId}`,
      token: s.user.token,
      payload: { documents: [b.attachmentId] },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().data.attachments.map((x: { attachmentId: string }) => x.attachmentId)).toEqual([
      b.attachmentId,
    ]);
    const oldUrl = `/api/data/${s.configId}/${dataId}/attachments/${a.attachmentId}`;
    expect((await get(oldUrl)).statusCode).toBe(404);
    // The released upload can be linked again until the cleanup removes it.
    const put = await s.t.request({
      method: 'PUT',
      url: `/api/data/${s.configId}/${dataId}`,
      token: s.user.token,
      payload: { documents: [a.attachmentId, b.attachmentId] },
    });
    expect(put.json().data.attachments).toHaveLength(2);
  });

  it("another site's user gets a 404 for the file, and cannot link the upload", async () => {
    const siteA = await createSite(s.t, s.admin, 'Alpha', 'alpha.example.com');
    const siteB = await createSite(s.t, s.admin, 'Beta', 'beta.example.com');
    const userA = await createUser(s.t, { siteId: siteA });
    const managerB = await createUser(s.t, { role: 'manager', siteId: siteB });
    const uploaded = (
      await upload(PNG, { field: 'photo', token: userA.token, host: 'alpha.example.com' })
    ).json();
    const created = await createRecord({ photo: uploaded.attachmentId }, userA.token, 'alpha.example.com');
    expect(created.statusCode).toBe(201);
    const url = `/api/data/${s.configId}/${created.json().dataId}/attachments/${uploaded.attachmentId}`;
    expect((await get(url, { token: userA.token, host: 'alpha.example.com' })).statusCode).toBe(200);
    const foreign = await get(url, { token: managerB.token, host: 'beta.example.com' });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe('RECORD_NOT_FOUND');
    const linked = await createRecord({ photo: uploaded.attachmentId }, managerB.token, 'beta.example.com');
    expect(linked.statusCode).toBe(400);
    expect(linked.json().code).toBe('ATTACHMENT_NOT_LINKABLE');
  });

  it('two records claiming one upload at once: one gets it, the other is refused; two same uploads make one blob', async () => {
    const photo = (await upload(PNG, { field: 'photo' })).json();
    const answers = await Promise.all([
      createRecord({ photo: photo.attachmentId }),
      createRecord({ photo: photo.attachmentId }),
    ]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 400]);
    expect(answers.find((a) => a.statusCode === 400)!.json().validationErrors[0].message).toBe(
      `${photo.attachmentId} belongs to another record`,
    );
    const list = await get(`/api/data/${s.configId}`, { token: s.admin });
    expect(list.json().total).toBe(1);

    const same = await Promise.all([upload(PDF), upload(PDF, { token: other().token }), upload(PDF)]);
    expect(same.map((a) => a.statusCode)).toEqual([201, 201, 201]);
    expect(await counts()).toEqual({ attachments: 4, blobs: 2, stored: 2 });
  });

  it('limits uploads per user per minute (ATTACHMENT_UPLOADS_PER_MINUTE)', async () => {
    const limited = await createTestApp({
      database: s.t.database,
      env: { ATTACHMENT_UPLOADS_PER_MINUTE: '2' },
    });
    try {
      const send = (token = s.user.token) =>
        limited.request({
          method: 'POST',
          url: `/api/data/${s.configId}/attachments?field=documents`,
          token,
          payload: PDF,
        });
      expect((await send()).statusCode).toBe(201);
      expect((await send()).statusCode).toBe(201);
      const third = await send();
      expect(third.statusCode).toBe(429);
      expect(third.json()).toMatchObject({
        code: 'ATTACHMENT_UPLOAD_LIMIT_REACHED',
        details: { perMinute: 2 },
      });
      // Another user has their own allowance.
      expect((await send(other().token)).statusCode).toBe(201);
      expect(await counts()).toEqual({ attachments: 3, blobs: 1, stored: 1 });
    } finally {
      await limited.close();
    }
  });

  it('removes a blob when the last record referring to it is purged, and unlinked uploads after their time', async () => {
    const cleanup = () => s.t.app.get(AttachmentCleanup).purge(new Date(Date.now() + 60_000));
    const purgeTrash = () => s.t.app.get(RecordTrashPurge).purge(new Date(Date.now() + 60_000));
    const mine = (await upload(PDF)).json();
    const theirs = (await upload(PDF, { token: other().token })).json();
    const orphan = (await upload(PNG, { field: 'photo' })).json();
    const first = (await createRecord({ documents: [mine.attachmentId] })).json().dataId;
    const second = (await createRecord({ documents: [theirs.attachmentId] }, other().token)).json().dataId;
    expect(await counts()).toEqual({ attachments: 3, blobs: 2, stored: 2 });

    expect(await cleanup()).toBe(2); // the orphan upload and its blob
    expect(orphan.attachmentId).toBeDefined();
    expect(await counts()).toEqual({ attachments: 2, blobs: 1, stored: 1 });

    const remove = (id: string, token: string) =>
      s.t.request({ method: 'DELETE', url: `/api/data/${s.configId}/${id}`, token });
    expect((await remove(first, s.user.token)).statusCode).toBe(200);
    // In the trash the file stays (the record can be restored).
    expect(await cleanup()).toBe(0);
    expect(await purgeTrash()).toBe(1);
    expect(await cleanup()).toBe(0);
    expect(await counts()).toEqual({ attachments: 1, blobs: 1, stored: 1 });

    expect((await remove(second, other().token)).statusCode).toBe(200);
    expect(await purgeTrash()).toBe(1);
    expect(await cleanup()).toBe(1);
    expect(await counts()).toEqual({ attachments: 0, blobs: 0, stored: 0 });
  });
});
