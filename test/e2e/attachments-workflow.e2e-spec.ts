import { createHash, randomBytes } from 'node:crypto';
import { type TestUser } from '../factories/user.factory';
import { type HttpTestServer } from '../utils/http-test-server';
import { type SmtpTestServer } from '../utils/smtp-test-server';
import { useAppSuite } from '../utils/app-suite';
import type { TestApp } from '../utils/test-app';
import { createSteps, run } from '../utils/workflow-api';
import { until } from '../utils/until';

const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(400_000)]);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** The attached files of a raw MIME message as nodemailer writes them (base64 parts with a filename). */
function attachmentsOf(raw: string): { filename: string; contentType: string; content: Buffer }[] {
  const parts = raw.split(/\r\n--[^\r\n]+\r\n/);
  return parts.flatMap((part) => {
    const [head, ...rest] = part.split('\r\n\r\n');
    const unfolded = head.replace(/\r\n[ \t]+/g, ' ');
    const filename = /Content-Disposition: attachment;\s*filename="?([^";\r\n]+)"?/i.exec(unfolded)?.[1];
    if (!filename) return [];
    const contentType = /Content-Type: ([^;\r\n]+)/i.exec(unfolded)![1];
    const content = Buffer.from(rest.join('\r\n\r\n').split('\r\n--')[0].replace(/\s+/g, ''), 'base64');
    return [{ filename, contentType, content }];
  });
}

describe('attachments in webhooks and workflows: metadata in payloads and scopes, files in mails', () => {
  let smtp: SmtpTestServer;
  let receiver: HttpTestServer;
  let t: TestApp;
  let admin: string;
  let user: TestUser;
  let configId: string;

  useAppSuite((suite) => ({ t, smtp, partner: receiver, admin, user, configId } = suite), {
    smtp: true,
    partner: true,
    env: {
      OUTBOX_POLL_MS: '100',
      WEBHOOK_POLL_MS: '50',
      NOTIFY_ATTACHMENTS_MAX_BYTES: String(PDF.length + 10),
    },
    users: 1,
    forms: [
      {
        title: 'Claims',
        schema: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            documents: { type: 'array', items: { type: 'string', format: 'attachment' } },
          },
        },
        computedRules: [],
        validationRules: [],
        preferences: { saveLimit: null },
      },
    ],
  });

  const upload = async (bytes: Buffer, filename: string) => {
    const response = await t.request({
      method: 'POST',
      url: `/api/data/${configId}/attachments?field=documents&filename=${filename}`,
      token: user.token,
      headers: { 'content-type': 'application/octet-stream' },
      payload: bytes,
    });
    expect(response.statusCode).toBe(201);
    return response.json<{ attachmentId: string }>();
  };

  it("a notify step attaches the run's record files, byte for byte, streamed into the mail", async () => {
    const workflowId = await createSteps(t, admin, [
      { name: 'store', type: 'save' },
      {
        name: 'mail',
        type: 'notify',
        config: { email: { to: 'office@example.com', subject: 'Claim {{input.name}}', attachFiles: true } },
      },
    ]);
    const { attachmentId } = await upload(PDF, 'claim.pdf');
    const body = await run(t, user.token, workflowId, configId, { name: 'Ann', documents: [attachmentId] });
    expect(body).toMatchObject({ success: true, status: 'success' });
    expect(body.results.mail).toEqual({
      to: 'office@example.com',
      subject: 'Claim Ann',
      queued: true,
      attached: ['claim.pdf'],
    });
    const [received] = await smtp.waitFor(1, 20_000);
    const files = attachmentsOf(received.raw);
    expect(files).toHaveLength(1);
    const [file] = files;
    expect(file.filename).toBe('claim.pdf');
    expect(file.contentType).toBe('application/pdf');
    expect(sha256(file.content)).toBe(sha256(PDF));
    expect(file.content.equals(PDF)).toBe(true);
  });

  it('refuses files over NOTIFY_ATTACHMENTS_MAX_BYTES together, and attachFiles without a record', async () => {
    const workflowId = await createSteps(t, admin, [
      { name: 'store', type: 'save' },
      {
        name: 'mail',
        type: 'notify',
        config: { email: { to: 'o@example.com', subject: 'x', attachFiles: true } },
      },
    ]);
    const first = await upload(PDF, 'a.pdf');
    const second = await upload(Buffer.concat([PDF, Buffer.from('more')]), 'b.pdf');
    const body = await run(t, user.token, workflowId, configId, {
      name: 'Big',
      documents: [first.attachmentId, second.attachmentId],
    });
    expect(body).toMatchObject({
      success: false,
      status: 'failed',
      steps: [
        { name: 'store', status: 'success' },
        { name: 'mail', status: 'failed', error: { code: 'MAIL_ATTACHMENTS_TOO_LARGE' } },
      ],
    });
    const alone = await createSteps(t, admin, [
      {
        name: 'mail',
        type: 'notify',
        config: { email: { to: 'o@example.com', subject: 'x', attachFiles: true } },
      },
    ]);
    expect(await run(t, user.token, alone, configId, { name: 'none' })).toMatchObject({
      success: false,
      steps: [{ name: 'mail', status: 'failed', error: { code: 'NO_RECORD_TO_ATTACH' } }],
    });
    expect(smtp.messages).toHaveLength(0);
  });

  it("webhook payloads and a triggered run's savedData carry each file's metadata and URL", async () => {
    const hook = await t.request({
      method: 'POST',
      url: '/api/webhooks',
      token: admin,
      payload: { url: receiver.url('/hooks'), events: ['record.created'] },
    });
    expect(hook.statusCode).toBe(201);
    const workflowId = await createSteps(
      t,
      admin,
      [
        {
          name: 'mail',
          type: 'notify',
          config: { email: { to: 'o@example.com', subject: 'x', attachFiles: true } },
        },
      ],
      { config: { triggers: [{ event: 'record.created', configId }] } },
    );
    expect(workflowId).toEqual(expect.any(String));
    const { attachmentId } = await upload(PDF, 'scan.pdf');
    const created = await t.request({
      method: 'POST',
      url: `/api/data/${configId}`,
      token: user.token,
      payload: { name: 'Ann', documents: [attachmentId] },
    });
    expect(created.statusCode).toBe(201);
    const dataId = created.json().dataId;
    const metadata = {
      attachmentId,
      field: 'documents',
      filename: 'scan.pdf',
      mediaType: 'application/pdf',
      size: PDF.length,
      sha256: sha256(PDF),
      url: `/api/data/${configId}/${dataId}/attachments/${attachmentId}`,
    };
    const [delivery] = await until(
      () => receiver.requests,
      (requests) => requests.length > 0,
      'the webhook delivery',
    );
    expect(JSON.parse(delivery.body).data.record).toMatchObject({
      _id: dataId,
      data: { name: 'Ann', documents: [attachmentId] },
      attachments: [metadata],
    });
    // The triggered run (as the record's owner) mails the record's file.
    const [received] = await smtp.waitFor(1, 20_000);
    expect(attachmentsOf(received.raw).map((file) => file.content.equals(PDF))).toEqual([true]);
  });
});
