import { randomBytes } from 'node:crypto';
import { useAppSuite } from '../../utils/app-suite';
import { type RecordedRequest } from '../../utils/http-test-server';
import { createSteps, failedRun, postWorkflow, run, workflowBody } from '../../utils/workflow-api';

const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(600_000)]);
const TEXT = Buffer.from('Claim notes: water damage, kitchen.\n'.repeat(2_000));

/** A multipart body read back by the platform's own parser (undici's `Response.formData()`). */
async function formDataOf(request: RecordedRequest): Promise<FormData> {
  return new Response(request.bytes, {
    headers: { 'content-type': String(request.headers['content-type']) },
  }).formData();
}

describe('the api step sends a file of the run’s record: as the body, or in a multipart body', () => {
  const s = useAppSuite({
    partner: true,
    users: 1,
    forms: [
      {
        title: 'Claims',
        schema: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            scan: { type: 'string', format: 'attachment' },
            documents: { type: 'array', items: { type: 'string', format: 'attachment' } },
          },
        },
        computedRules: [],
        validationRules: [],
        preferences: { saveLimit: null },
      },
    ],
  });

  const upload = async (field: string, bytes: Buffer, filename: string): Promise<string> => {
    const response = await s.t.request({
      method: 'POST',
      url: `/api/data/${s.configId}/attachments?field=${field}&filename=${filename}`,
      token: s.user.token,
      headers: { 'content-type': 'application/octet-stream' },
      payload: bytes,
    });
    expect(response.statusCode).toBe(201);
    return response.json<{ attachmentId: string }>().attachmentId;
  };

  /** A save, then the api step `send` with `config`: the file it sends is one of the saved record's. */
  const saveThenSend = (config: Record<string, unknown>) => [
    { name: 'store', type: 'save' },
    { name: 'send', type: 'api', config },
  ];
  const createSaveThenSend = (config: Record<string, unknown>) =>
    createSteps(s.t, s.admin, saveThenSend(config));
  /** Runs save-then-send(`config`) for a record of `name` whose `scan` is `bytes` uploaded as `filename`. */
  async function runWithScan(name: string, bytes: Buffer, filename: string, config: Record<string, unknown>) {
    const workflowId = await createSaveThenSend(config);
    const scan = await upload('scan', bytes, filename);
    return run(s.t, s.user.token, workflowId, s.configId, { name, scan });
  }

  it('as the body: the file’s bytes, typed with its media type and sized, streamed to the partner', async () => {
    const body = await runWithScan('Ann', PDF, 'claim.pdf', {
      url: s.partner.url('/scans/{{savedData._id}}'),
      method: 'PUT',
      headers: { 'X-Claim': '{{input.name}}' },
      file: { field: 'scan', as: 'body' },
    });
    expect(body).toMatchObject({ success: true, status: 'success' });
    expect(body.results.send).toEqual({ status: 200, data: { ok: true } });
    expect(s.partner.requests).toHaveLength(1);
    const [received] = s.partner.requests;
    expect(received.method).toBe('PUT');
    expect(received.url).toBe(`/scans/${body.results.store.dataId}`);
    expect(received.headers['content-type']).toBe('application/pdf');
    expect(received.headers['content-length']).toBe(String(PDF.length));
    expect(received.headers['x-claim']).toBe('Ann');
    expect(received.bytes.equals(PDF)).toBe(true);
  });

  it('as the body, a Content-Type of the step’s headers wins over the file’s media type', async () => {
    expect(
      await runWithScan('Bo', TEXT, 'notes.txt', {
        url: s.partner.url('/raw'),
        method: 'POST',
        headers: { 'Content-Type': 'application/octet-stream' },
        file: { field: 'scan', as: 'body' },
      }),
    ).toMatchObject({ success: true });
    const [received] = s.partner.requests;
    expect(received.headers['content-type']).toBe('application/octet-stream');
    expect(received.bytes.equals(TEXT)).toBe(true);
  });

  it('in a multipart body: the file as one part (name, filename, type) and the rendered payload as another', async () => {
    const workflowId = await createSaveThenSend({
      url: s.partner.url('/claims'),
      method: 'POST',
      payload: { claim: '{{savedData._id}}', name: '{{input.name}}' },
      file: { field: 'documents', as: 'multipart', partName: 'document' },
    });
    const document = await upload('documents', PDF, 'claim.pdf');
    const body = await run(s.t, s.user.token, workflowId, s.configId, { name: 'Cy', documents: [document] });
    expect(body).toMatchObject({ success: true, results: { send: { status: 200, data: { ok: true } } } });
    expect(s.partner.requests).toHaveLength(1);
    const [received] = s.partner.requests;
    expect(received.headers['content-type']).toMatch(/^multipart\/form-data; boundary=\S+$/);
    expect(received.headers['content-length']).toBe(String(received.bytes.length));
    const form = await formDataOf(received);
    expect([...form.keys()]).toEqual(['data', 'document']);
    const file = form.get('document') as File;
    expect([file.name, file.type, file.size]).toEqual(['claim.pdf', 'application/pdf', PDF.length]);
    expect(Buffer.from(await file.arrayBuffer()).equals(PDF)).toBe(true);
    // The data part is the payload as the step would have sent it alone: JSON, typed so (a part
    // without a filename is a text field to the parser, so its type is read from the bytes).
    expect(JSON.parse(form.get('data') as string)).toEqual({ claim: body.results.store.dataId, name: 'Cy' });
    expect(
      received.bytes.includes(
        'Content-Disposition: form-data; name="data"\r\nContent-Type: application/json\r\n\r\n{',
      ),
    ).toBe(true);
  });

  it('in a multipart body without a payload: the file part alone, named file by default', async () => {
    expect(
      await runWithScan('Di', TEXT, 'notes.txt', {
        url: s.partner.url('/files'),
        method: 'POST',
        file: { field: 'scan', as: 'multipart' },
      }),
    ).toMatchObject({ success: true });
    const form = await formDataOf(s.partner.requests[0]);
    expect([...form.keys()]).toEqual(['file']);
    const file = form.get('file') as File;
    expect([file.name, file.type]).toEqual(['notes.txt', 'text/plain']);
    expect(Buffer.from(await file.arrayBuffer()).equals(TEXT)).toBe(true);
  });

  it('fails the step with a specific code, sending nothing, when there is no file or no record', async () => {
    const steps = (field: string) =>
      saveThenSend({ url: s.partner.url('/x'), method: 'POST', file: { field, as: 'body' } });
    const failure = (code: string) =>
      failedRun(
        { name: 'store', status: 'success' },
        { name: 'send', status: 'failed', attempts: 1, error: { code } },
      );
    const scanStep = await createSteps(s.t, s.admin, steps('scan'));
    const noFile = await run(s.t, s.user.token, scanStep, s.configId, { name: 'Ed' });
    expect(noFile).toMatchObject(failure('NO_FILE_TO_SEND'));
    expect(noFile.steps[1].error.details).toEqual({ field: 'scan', recordId: noFile.results.store.dataId });
    // A field the form does not have holds no file either.
    const unknown = await createSteps(s.t, s.admin, steps('nothing'));
    expect(await run(s.t, s.user.token, unknown, s.configId, { name: 'Fa' })).toMatchObject(
      failure('NO_FILE_TO_SEND'),
    );
    // Which of several files to send is not guessed.
    const documents = await createSteps(s.t, s.admin, steps('documents'));
    const two = [await upload('documents', PDF, 'a.pdf'), await upload('documents', TEXT, 'b.txt')];
    const several = await run(s.t, s.user.token, documents, s.configId, { name: 'Gu', documents: two });
    expect(several).toMatchObject(failure('TOO_MANY_FILES_TO_SEND'));
    expect(several.steps[1].error.details).toMatchObject({ field: 'documents', count: 2 });
    // No save step and no triggering record: no record to take a file from.
    const alone = await createSteps(s.t, s.admin, steps('scan').slice(1));
    expect(await run(s.t, s.user.token, alone, s.configId, { name: 'Hu' })).toMatchObject({
      success: false,
      steps: [{ name: 'send', status: 'failed', error: { code: 'NO_RECORD_TO_ATTACH' } }],
    });
    expect(s.partner.requests).toHaveLength(0);
    expect(s.partner.connections).toBe(0);
  });

  it('refuses a file option that does not fit when the definition is saved (422 naming the step)', async () => {
    const refused = async (config: Record<string, unknown>) => {
      const response = await postWorkflow(
        s.t,
        s.admin,
        workflowBody({
          config: {
            steps: saveThenSend({ url: s.partner.url('/x'), ...config }),
          },
        }),
      );
      expect(response.statusCode).toBe(422);
      expect(response.json().code).toBe('VALIDATION_FAILED');
      return response.json().validationErrors;
    };
    expect(await refused({ file: { field: 'scan', as: 'body' } })).toEqual([
      {
        field: 'config.steps[1].config.file',
        rule: 'apiFile',
        message: 'file needs method POST, PUT or PATCH (the file is sent as the request body)',
      },
    ]);
    expect(await refused({ method: 'POST', payload: { a: 1 }, file: { field: 'scan', as: 'body' } })).toEqual(
      [
        {
          field: 'config.steps[1].config.file',
          rule: 'apiFile',
          message: expect.stringContaining('payload'),
        },
      ],
    );
    expect(await refused({ method: 'POST', file: { field: 'scan', as: 'zip' } })).toEqual([
      { field: 'config.steps[1].config.file.as', rule: 'isIn', message: expect.any(String) },
    ]);
    expect(await refused({ method: 'POST', file: { field: 'scan', as: 'body', partName: 'f' } })).toEqual([
      {
        field: 'config.steps[1].config.file.partName',
        rule: 'onlyForMultipart',
        message: expect.stringContaining('is only for "as": "multipart"'),
      },
    ]);
    expect(await refused({ method: 'POST', file: { field: '{{input.field}}', as: 'multipart' } })).toEqual([
      { field: 'config.steps[1].config.file.field', rule: 'matches', message: expect.any(String) },
    ]);
  });
});
