import { randomBytes } from 'node:crypto';
import { PDF, PNG, sha256, uploadAnswer } from '../factories/attachment-files';
import { errorBody } from '../utils/api-error';
import { postRecord } from '../utils/api-requests';
import { useAppSuite } from '../utils/app-suite';
import { countRows } from '../utils/row-counts';

const FORM_SCHEMA = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string' },
    photo: { type: 'string', format: 'attachment', 'x-mediaTypes': ['image/*'], 'x-maxSize': 100_000 },
    documents: { type: 'array', items: { type: 'string', format: 'attachment' }, maxItems: 3 },
  },
};

type Part = { name: string; text: string } | { name: string; file: Buffer; filename: string };

/** A multipart/form-data body as a browser or curl -F sends it (Node's own FormData encoder). */
async function multipart(parts: Part[]): Promise<{ payload: Buffer; contentType: string }> {
  const form = new FormData();
  for (const part of parts)
    if ('text' in part) form.append(part.name, part.text);
    else form.append(part.name, new Blob([part.file]), part.filename);
  const encoded = new Response(form);
  return {
    payload: Buffer.from(await encoded.arrayBuffer()),
    contentType: encoded.headers.get('content-type')!,
  };
}

describe('attachments: multipart uploads and a record sent with its files', () => {
  const s = useAppSuite({
    users: 1,
    forms: [
      {
        title: 'Claims',
        schema: FORM_SCHEMA,
        computedRules: [],
        validationRules: [],
      },
    ],
  });

  const post = (url: string, contentType: string, payload: string | Buffer) =>
    s.t.request({
      method: 'POST',
      url,
      token: s.user.token,
      headers: { 'content-type': contentType },
      payload,
    });
  const send = async (url: string, parts: Part[]) => {
    const { payload, contentType } = await multipart(parts);
    return post(url, contentType, payload);
  };
  const uploadParts = (parts: Part[], query = '') =>
    send(`/api/data/${s.configId}/attachments${query}`, parts);
  const createParts = (parts: Part[]) => send(`/api/data/${s.configId}`, parts);
  const counts = () =>
    countRows(s.t, { attachments: 'attachments', blobs: 'attachment_blobs', records: 'data_records' });
  const download = (url: string) => s.t.request({ method: 'GET', url, token: s.user.token });

  it('uploads one file part: its part name is the field unless ?field= says otherwise', async () => {
    const uploaded = await uploadParts([{ name: 'photo', file: PNG, filename: '../x/scan.png' }]);
    expect(uploaded.statusCode).toBe(201);
    expect(uploaded.json()).toEqual(
      uploadAnswer(PNG, { field: 'photo', filename: 'scan.png', mediaType: 'image/png' }),
    );
    const named = await uploadParts([{ name: 'file', file: PDF, filename: 'a.pdf' }], '?field=documents');
    expect(named.statusCode).toBe(201);
    expect(named.json()).toMatchObject({ field: 'documents', mediaType: 'application/pdf' });
    // A part name that is no field, on a form of several attachment fields, names nothing.
    const unnamed = await uploadParts([{ name: 'file', file: PDF, filename: 'a.pdf' }]);
    expect(unnamed.statusCode).toBe(422);
    expect(unnamed.json()).toMatchObject({ code: 'ATTACHMENT_FIELD_UNKNOWN' });
    expect(await counts()).toEqual({ attachments: 2, blobs: 2, records: 0 });
  });

  it('streams a multi-chunk file part into storage byte for byte', async () => {
    const bytes = Buffer.concat([PDF, randomBytes(700_000)]);
    const uploaded = await uploadParts([{ name: 'documents', file: bytes, filename: 'big.pdf' }]);
    expect(uploaded.statusCode).toBe(201);
    expect(uploaded.json()).toMatchObject({ size: bytes.length, sha256: sha256(bytes) });
    const created = await postRecord(s.t, s.user.token, s.configId, {
      name: 'Big',
      documents: [uploaded.json().attachmentId],
    });
    const [file] = created.json().data.attachments;
    const read = await download(file.url);
    expect(read.statusCode).toBe(200);
    expect(read.rawPayload.equals(bytes)).toBe(true);
  });

  it('refuses anything but one file part, a refused type and an oversized file, storing nothing', async () => {
    const two = await uploadParts([
      { name: 'documents', file: PDF, filename: 'a.pdf' },
      { name: 'documents', file: PNG, filename: 'b.png' },
    ]);
    expect(two.statusCode).toBe(400);
    expect(two.json()).toMatchObject({ code: 'MULTIPART_INVALID', details: { reason: 'too many files' } });
    const text = await uploadParts([{ name: 'note', text: 'hello' }]);
    expect(text.statusCode).toBe(400);
    expect(text.json().code).toBe('MULTIPART_INVALID');
    const none = await post(
      `/api/data/${s.configId}/attachments`,
      'multipart/form-data; boundary=x',
      '--x--\r\n',
    );
    expect(none.statusCode).toBe(400);
    expect(none.json()).toMatchObject({
      code: 'MULTIPART_INVALID',
      details: { reason: 'the body has no file part' },
    });
    const { payload, contentType } = await multipart([{ name: 'documents', file: PDF, filename: 'a.pdf' }]);
    const cut = await post(
      `/api/data/${s.configId}/attachments`,
      contentType,
      payload.subarray(0, payload.length - 30),
    );
    expect(cut.statusCode).toBe(400);
    expect(cut.json().code).toBe('MULTIPART_INVALID');
    const pdfAsPhoto = await uploadParts([{ name: 'photo', file: PDF, filename: 'x.png' }]);
    expect(pdfAsPhoto.statusCode).toBe(415);
    expect(pdfAsPhoto.json().code).toBe('ATTACHMENT_TYPE_NOT_ALLOWED');
    const big = await uploadParts([
      { name: 'photo', file: Buffer.concat([PNG, Buffer.alloc(100_001)]), filename: 'big.png' },
    ]);
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ code: 'ATTACHMENT_TOO_LARGE', details: { limit: 100_000 } });
    expect(await counts()).toEqual({ attachments: 0, blobs: 0, records: 0 });
  });

  it('takes a multipart body on no other route', async () => {
    const elsewhere = await send('/api/configs', [{ name: 'record', text: '{}' }]);
    expect(elsewhere.statusCode).toBe(415);
    expect(elsewhere.json().code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('creates a record with its files in one request, the files linked and byte for byte', async () => {
    const scan = Buffer.concat([PDF, randomBytes(300_000)]);
    const created = await createParts([
      { name: 'photo', file: PNG, filename: 'face.png' },
      { name: 'record', text: JSON.stringify({ name: 'Ann' }) },
      { name: 'documents', file: PDF, filename: 'one.pdf' },
      { name: 'documents', file: scan, filename: 'two.pdf' },
    ]);
    expect(created.statusCode).toBe(201);
    const saved = created.json();
    const files = saved.data.attachments as { attachmentId: string; filename: string; url: string }[];
    expect(files.map((file) => file.filename).sort()).toEqual(['face.png', 'one.pdf', 'two.pdf']);
    const id = (name: string) => files.find((file) => file.filename === name)!.attachmentId;
    expect(saved.data.data).toEqual({
      name: 'Ann',
      photo: id('face.png'),
      documents: [id('one.pdf'), id('two.pdf')],
    });
    const two = files.find((file) => file.filename === 'two.pdf')!;
    expect((await download(two.url)).rawPayload.equals(scan)).toBe(true);
    // The history shows the files added, then one removed by a PATCH.
    const patched = await s.t.request({
      method: 'PATCH',
      url: `/api/data/${s.configId}/${saved.dataId}`,
      token: s.user.token,
      payload: { documents: [id('two.pdf')] },
    });
    expect(patched.statusCode).toBe(200);
    const history = await s.t.request({
      method: 'GET',
      url: `/api/data/${s.configId}/${saved.dataId}/history`,
      token: s.admin,
    });
    expect(history.statusCode).toBe(200);
    const file = (name: string, field: string, mediaType: string, size: number) => ({
      attachmentId: id(name),
      field,
      filename: name,
      mediaType,
      size,
    });
    const [update, create] = history.json().data;
    expect(update).toMatchObject({
      action: 'updated',
      attachments: { added: [], removed: [file('one.pdf', 'documents', 'application/pdf', PDF.length)] },
    });
    expect(create.action).toBe('created');
    expect(create.attachments.removed).toEqual([]);
    expect(create.attachments.added).toEqual(
      expect.arrayContaining([
        file('face.png', 'photo', 'image/png', PNG.length),
        file('one.pdf', 'documents', 'application/pdf', PDF.length),
        file('two.pdf', 'documents', 'application/pdf', scan.length),
      ]),
    );
    expect(create.attachments.added).toHaveLength(3);
  });

  it('?status=draft saves a record sent with its files as a draft: required fields not enforced, files linked', async () => {
    const { payload, contentType } = await multipart([
      { name: 'record', text: JSON.stringify({}) },
      { name: 'photo', file: PNG, filename: 'face.png' },
    ]);
    const saved = await post(`/api/data/${s.configId}?status=draft`, contentType, payload);
    expect(saved.statusCode).toBe(201);
    const draft = saved.json();
    expect(draft.data.status).toBe('draft');
    const [photo] = draft.data.attachments as { attachmentId: string; url: string }[];
    expect(draft.data.data).toEqual({ photo: photo.attachmentId });
    expect((await download(photo.url)).rawPayload.equals(PNG)).toBe(true);
    // Still a draft: the list leaves it out, submitting it without the required name is refused.
    const listed = await s.t.request({ method: 'GET', url: `/api/data/${s.configId}`, token: s.user.token });
    expect(listed.json().total).toBe(0);
    const submitted = await s.t.request({
      method: 'POST',
      url: `/api/data/${s.configId}/${draft.dataId}/submit`,
      token: s.user.token,
    });
    expect(submitted.statusCode).toBe(422);
    expect(submitted.json().code).toBe('DRAFT_INCOMPLETE');
  });

  it('a refused record stores none of its files; a malformed record part is a 400', async () => {
    await uploadParts([{ name: 'documents', file: PDF, filename: 'kept.pdf' }]);
    const before = await counts();
    const invalid = await createParts([
      { name: 'record', text: JSON.stringify({ name: 42 }) },
      { name: 'photo', file: PNG, filename: 'face.png' },
      { name: 'documents', file: PDF, filename: 'same-bytes-as-kept.pdf' },
    ]);
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().code).toBe('DATA_VALIDATION_FAILED');
    // The upload made earlier, whose bytes the refused request shared, is left as it was.
    expect(await counts()).toEqual(before);
    const wrongType = await createParts([
      { name: 'documents', file: PDF, filename: 'one.pdf' },
      { name: 'photo', file: PDF, filename: 'not-a-photo.png' },
      { name: 'record', text: JSON.stringify({ name: 'Ann' }) },
    ]);
    expect(wrongType.statusCode).toBe(415);
    const unknownField = await createParts([
      { name: 'photo', file: PNG, filename: 'face.png' },
      { name: 'name', file: PNG, filename: 'face.png' },
      { name: 'record', text: JSON.stringify({ name: 'Ann' }) },
    ]);
    expect(unknownField.statusCode).toBe(422);
    expect(unknownField.json().code).toBe('ATTACHMENT_FIELD_UNKNOWN');
    const noRecord = await createParts([{ name: 'photo', file: PNG, filename: 'face.png' }]);
    expect(noRecord.statusCode).toBe(400);
    expect(noRecord.json()).toMatchObject({
      code: 'MULTIPART_INVALID',
      details: { reason: 'the body has no "record" part' },
    });
    const notJson = await createParts([
      { name: 'photo', file: PNG, filename: 'face.png' },
      { name: 'record', text: '{"name": ' },
    ]);
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().code).toBe('INVALID_JSON');
    const otherText = await createParts([{ name: 'comment', text: 'hi' }]);
    expect(otherText.statusCode).toBe(400);
    expect(otherText.json().code).toBe('MULTIPART_INVALID');
    expect(await counts()).toEqual(before);
  });

  describe('with an Idempotency-Key', () => {
    const createKeyed = async (parts: Part[], key: string) => {
      const { payload, contentType } = await multipart(parts);
      return s.t.request({
        method: 'POST',
        url: `/api/data/${s.configId}`,
        token: s.user.token,
        headers: { 'content-type': contentType, 'idempotency-key': key },
        payload,
      });
    };
    const claim = (photo: Buffer, name = 'Ann'): Part[] => [
      { name: 'record', text: JSON.stringify({ name }) },
      { name: 'photo', file: photo, filename: 'face.png' },
      { name: 'documents', file: PDF, filename: 'one.pdf' },
    ];
    const reused = errorBody(422, { code: 'IDEMPOTENCY_KEY_REUSED' });

    it('the same body again answers the first record and stores nothing more', async () => {
      const first = await createKeyed(claim(PNG), 'claim-1');
      expect(first.statusCode).toBe(201);
      const stored = await counts();
      expect(stored).toEqual({ attachments: 2, blobs: 2, records: 1 });
      const again = await createKeyed(claim(PNG), 'claim-1');
      expect(again.statusCode).toBe(201);
      expect(again.json()).toEqual(first.json());
      expect(await counts()).toEqual(stored);
    });

    it('other file bytes, another filename, another record part or a JSON body under the key are a 422 IDEMPOTENCY_KEY_REUSED, and store nothing', async () => {
      expect((await createKeyed(claim(PNG), 'claim-2')).statusCode).toBe(201);
      const stored = await counts();
      const otherPhoto = Buffer.concat([PNG, Buffer.from([0])]);
      const renamed = claim(PNG).map((part) =>
        part.name === 'documents' ? { ...part, filename: 'two.pdf' } : part,
      );
      for (const parts of [claim(otherPhoto), renamed, claim(PNG, 'Bob'), claim(PNG).reverse()]) {
        const answer = await createKeyed(parts, 'claim-2');
        expect(answer.statusCode).toBe(422);
        expect(answer.json()).toMatchObject(reused);
      }
      const json = await postRecord(
        s.t,
        s.user.token,
        s.configId,
        { name: 'Ann' },
        { 'idempotency-key': 'claim-2' },
      );
      expect(json.statusCode).toBe(422);
      expect(json.json()).toMatchObject(reused);
      expect(await counts()).toEqual(stored);
    });

    it('a multipart body under a key a JSON create used is a 422 IDEMPOTENCY_KEY_REUSED, answered without reading it', async () => {
      const json = await postRecord(
        s.t,
        s.user.token,
        s.configId,
        { name: 'Ann' },
        { 'idempotency-key': 'claim-3' },
      );
      expect(json.statusCode).toBe(201);
      const answer = await createKeyed(claim(PNG), 'claim-3');
      expect(answer.statusCode).toBe(422);
      expect(answer.json()).toMatchObject(reused);
      // A body that reading would refuse (no part ever ends): the key's answer comes first.
      const unreadable = await s.t.request({
        method: 'POST',
        url: `/api/data/${s.configId}`,
        token: s.user.token,
        headers: { 'content-type': 'multipart/form-data; boundary=xyz', 'idempotency-key': 'claim-3' },
        payload: '--xyz\r\ncontent-disposition: form-data; name="photo"; filename="a.png"\r\n\r\nno end',
      });
      expect(unreadable.statusCode).toBe(422);
      expect(unreadable.json()).toMatchObject(reused);
      expect(await counts()).toEqual({ attachments: 0, blobs: 0, records: 1 });
    });

    it('a refused first request frees the key: the corrected body is then created under it', async () => {
      const refused = await createKeyed(claim(PDF), 'claim-4');
      expect(refused.statusCode).toBe(415);
      const created = await createKeyed(claim(PNG), 'claim-4');
      expect(created.statusCode).toBe(201);
      expect(await counts()).toEqual({ attachments: 2, blobs: 2, records: 1 });
    });

    it('the same body sent three times at once makes one record, and each answers it', async () => {
      const answers = await Promise.all([1, 2, 3].map(() => createKeyed(claim(PNG), 'claim-5')));
      expect(answers.map((answer) => answer.statusCode)).toEqual([201, 201, 201]);
      expect(new Set(answers.map((answer) => answer.json().dataId)).size).toBe(1);
      expect(await counts()).toEqual({ attachments: 2, blobs: 2, records: 1 });
    });
  });

  it('documents the multipart bodies in the OpenAPI document', async () => {
    const document = (await s.t.request({ method: 'GET', url: '/api-docs-json' })).json();
    const uploadBody = document.paths['/api/data/{configId}/attachments'].post.requestBody.content;
    expect(uploadBody['multipart/form-data'].schema.properties.photo).toEqual({
      type: 'string',
      format: 'binary',
      description: 'The file, named by its field',
    });
    const createBody = document.paths['/api/data/{configId}'].post.requestBody.content;
    expect(createBody['multipart/form-data'].schema.required).toEqual(['record']);
  });
});
