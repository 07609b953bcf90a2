import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailTestingModule, type MailTestingModule } from '../../test/utils/mail-testing';
import { parseMessage, startSmtpTestServer, type SmtpTestServer } from '../../test/utils/smtp-test-server';
import { MailDeliveryError } from './mail-delivery.error';
import { MailModule } from './mail.module';
import { MailService } from './mail.service';

const tempDir = () => mkdtempSync(join(tmpdir(), 'fdws-mail-'));

async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('MailService over SMTP', () => {
  let smtp: SmtpTestServer;
  let testing: MailTestingModule;

  beforeEach(async () => {
    smtp = await startSmtpTestServer({ rejectRecipients: ['nobody@example.com'] });
    testing = await createMailTestingModule(
      { SMTP_URL: smtp.url, MAIL_FROM: 'forms@example.com', DATA_DIR: tempDir() },
      [MailModule],
    );
  });
  afterEach(async () => {
    await testing.moduleRef.close();
    await smtp.close();
  });

  it('delivers from MAIL_FROM to every recipient with the subject and both bodies', async () => {
    const sent = await testing.moduleRef.get(MailService).send({
      to: 'one@example.com, two@example.com',
      subject: 'Árvíztűrő report',
      html: '<p>Hello <b>there</b></p>',
      text: 'Hello there',
    });
    const [message] = await smtp.waitFor(1);
    expect(message.envelope.from).toBe('forms@example.com');
    expect(message.envelope.to).toEqual(['one@example.com', 'two@example.com']);
    expect(message.headers.from).toBe('forms@example.com');
    expect(message.headers.to).toBe('one@example.com, two@example.com');
    expect(message.subject).toBe('Árvíztűrő report');
    expect(message.html).toBe('<p>Hello <b>there</b></p>');
    expect(message.text).toBe('Hello there');
    expect(message.headers['message-id']).toBe(sent.messageId);
  });

  it('throws a MailDeliveryError when the server refuses the recipient', async () => {
    const failure = await testing.moduleRef
      .get(MailService)
      .send({ to: 'nobody@example.com', subject: 'x', text: 'x' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MailDeliveryError);
    expect(failure).toMatchObject({ code: 'SMTP_REJECTED', retryable: false, responseCode: 550 });
    expect(smtp.messages).toHaveLength(0);
  });
});

describe('MailService with SMTP credentials', () => {
  const secret = 's3cret-Pa55word';
  let smtp: SmtpTestServer;

  beforeEach(async () => {
    smtp = await startSmtpTestServer({ auth: { user: 'mailer', pass: secret } });
  });
  afterEach(() => smtp.close());

  it('logs in with the URL credentials and never logs the password', async () => {
    const url = `smtp://mailer:${secret}@127.0.0.1:${smtp.port}`;
    const testing = await createMailTestingModule({ SMTP_URL: url, DATA_DIR: tempDir() }, [MailModule]);
    try {
      await testing.moduleRef.get(MailService).send({ to: 'a@example.com', subject: 'Hi', text: 'Hi' });
      const [message] = await smtp.waitFor(1);
      expect(message.user).toBe('mailer');
      expect(message.envelope.from).toBe('no-reply@localhost');
    } finally {
      await testing.moduleRef.close();
    }
    expect(testing.logger.lines.join('\n')).not.toContain(secret);
  });

  it('reports a refused login without the password, in the error or the logs', async () => {
    const url = `smtp://mailer:wrong-${secret}@127.0.0.1:${smtp.port}`;
    const testing = await createMailTestingModule({ SMTP_URL: url, DATA_DIR: tempDir() }, [MailModule]);
    try {
      const failure = await testing.moduleRef
        .get(MailService)
        .send({ to: 'a@example.com', subject: 'Hi', text: 'Hi' })
        .then(() => new Error('sent'))
        .catch((error: unknown) => error as Error);
      expect(failure).toBeInstanceOf(MailDeliveryError);
      expect(failure.message).not.toContain(secret);
      expect(testing.logger.lines.some((line) => line.includes('Mail not sent'))).toBe(true);
    } finally {
      await testing.moduleRef.close();
    }
    expect(testing.logger.lines.join('\n')).not.toContain(secret);
    expect(smtp.messages).toHaveLength(0);
  });

  it('fails as retryable when the server cannot be reached', async () => {
    const testing = await createMailTestingModule(
      { SMTP_URL: `smtp://127.0.0.1:${await unusedPort()}`, DATA_DIR: tempDir() },
      [MailModule],
    );
    try {
      const failure = await testing.moduleRef
        .get(MailService)
        .send({ to: 'a@example.com', subject: 'Hi', text: 'Hi' })
        .catch((error: unknown) => error);
      expect(failure).toMatchObject({ name: 'MailDeliveryError', code: 'SMTP_UNAVAILABLE', retryable: true });
    } finally {
      await testing.moduleRef.close();
    }
  });
});

describe('MailService without SMTP_URL (outbox)', () => {
  it('writes each message as an .eml file into DATA_DIR/outbox, leaving no partial file', async () => {
    const dataDir = tempDir();
    const testing = await createMailTestingModule({ DATA_DIR: dataDir, MAIL_FROM: 'forms@example.com' }, [
      MailModule,
    ]);
    try {
      const mail = testing.moduleRef.get(MailService);
      const first = await mail.send({ to: 'a@example.com', subject: 'First', html: '<p>1</p>', text: '1' });
      await mail.send({ to: 'b@example.com, c@example.com', subject: 'Second', text: '2' });

      const files = readdirSync(join(dataDir, 'outbox')).sort();
      expect(files).toHaveLength(2);
      for (const file of files)
        expect(file).toMatch(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z-[0-9a-f]{12}\.eml$/);

      const parsed = files.map((file) => readFileSync(join(dataDir, 'outbox', file), 'utf8'));
      const byMessageId = parsed.find((raw) => raw.includes(first.messageId));
      expect(byMessageId).toBeDefined();
      expect(byMessageId).toContain('\r\n');
      const message = parseMessage(byMessageId!);
      expect(message.headers.from).toBe('forms@example.com');
      expect(message.headers.to).toBe('a@example.com');
      expect(message.subject).toBe('First');
      expect(message.html).toBe('<p>1</p>');
      expect(message.text).toBe('1');
      expect(parsed.map((raw) => parseMessage(raw).subject).sort()).toEqual(['First', 'Second']);
    } finally {
      await testing.moduleRef.close();
    }
  });

  it('throws OUTBOX_WRITE_FAILED when the outbox cannot be created', async () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'outbox'), 'a file where the folder should be');
    const testing = await createMailTestingModule({ DATA_DIR: dataDir }, [MailModule]);
    try {
      const failure = await testing.moduleRef
        .get(MailService)
        .send({ to: 'a@example.com', subject: 'x', text: 'x' })
        .catch((error: unknown) => error);
      expect(failure).toMatchObject({ name: 'MailDeliveryError', code: 'OUTBOX_WRITE_FAILED' });
    } finally {
      await testing.moduleRef.close();
    }
  });
});
