import { createHash, randomBytes } from 'node:crypto';
import { claimsForm } from '../factories/config.factory';
import { createRecord } from '../factories/record.factory';
import { useAppSuite } from '../utils/app-suite';
import { createWebhook } from '../utils/webhooks-api';
import { createSteps, run } from '../utils/workflow-api';
import { until } from '../utils/until';

const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(400_000)]);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const STORE = { name: 'store', type: 'save' };
/** A notify step mailing the run's record files. */
const mailFiles = (to = 'o@example.com', subject = 'x') => ({
  name: 'mail',
  type: 'notify',
  config: { email: { to, subject, attachFiles: true } },
});

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
  const s = useAppSuite({
    smtp: true,
    partner: true,
    env: {
      OUTBOX_POLL_MS: '100',
      WEBHOOK_POLL_MS: '50',
      NOTIFY_ATTACHMENTS_MAX_BYTES: String(PDF.length + 10),
    },
    users: 1,
    forms: [claimsForm({ documents: { type: 'array', items: { type: 'string', format: 'attachment' } } })],
  });

  const upload = async (bytes: Buffer, filename: string) => {
    const response = await s.t.request({
      method: 'POST',
      url: `/api/data/${s.configId}/attachments?field=documents&filename=${filename}`,
      token: s.user.token,
      headers: { 'content-type': 'application/octet-stream' },
      payload: bytes,
    });
    expect(response.statusCode).toBe(201);
    return response.json<{ attachmentId: string }>();
  };

  it("a notify step attaches the run's record files, byte for byte, streamed into the mail", async () => {
    const { t, smtp, admin, user, configId } = s;
    const workflowId = await createSteps(t, admin, [
      STORE,
      mailFiles('office@example.com', 'Claim {{input.name}}'),
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
    const { t, smtp, admin, user, configId } = s;
    const workflowId = await createSteps(t, admin, [STORE, mailFiles()]);
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
    const alone = await createSteps(t, admin, [mailFiles()]);
    expect(await run(t, user.token, alone, configId, { name: 'none' })).toMatchObject({
      success: false,
      steps: [{ name: 'mail', status: 'failed', error: { code: 'NO_RECORD_TO_ATTACH' } }],
    });
    expect(smtp.messages).toHaveLength(0);
  });

  it("webhook payloads and a triggered run's savedData carry each file's metadata and URL", async () => {
    const { t, smtp, admin, user, configId, partner: receiver } = s;
    await createWebhook(t, admin, { url: receiver.url('/hooks'), events: ['record.created'] });
    const workflowId = await createSteps(t, admin, [mailFiles()], {
      config: { triggers: [{ event: 'record.created', configId }] },
    });
    expect(workflowId).toEqual(expect.any(String));
    const { attachmentId } = await upload(PDF, 'scan.pdf');
    const { dataId } = await createRecord(t, user.token, configId, {
      name: 'Ann',
      documents: [attachmentId],
    });
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
