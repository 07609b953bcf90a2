import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailTestingModule, type MailTestingModule } from '../../test/utils/mail-testing';
import { startSmtpTestServer, type SmtpTestServer } from '../../test/utils/smtp-test-server';
import { StepError } from '../workflow/sdk/step-error';
import { AdminNotifier, type WorkflowFailure } from './admin-notifier.service';
import { MailModule } from './mail.module';

const dataDir = () => mkdtempSync(join(tmpdir(), 'fdws-notice-'));

const failure: WorkflowFailure = {
  workflowName: 'Order <intake>',
  workflowId: 'wf-123',
  runId: 'run-456',
  stepName: 'callCrm',
  error: new StepError('HTTP 503 from crm.example.com', {
    code: 'HTTP_STATUS',
    retryable: true,
    details: { authorization: 'Bearer very-secret-token' },
  }),
};

describe('AdminNotifier', () => {
  let smtp: SmtpTestServer;
  let testing: MailTestingModule | undefined;

  beforeEach(async () => {
    smtp = await startSmtpTestServer();
  });
  afterEach(async () => {
    await testing?.moduleRef.close();
    testing = undefined;
    await smtp.close();
  });

  const notifier = async (env: Record<string, string>) => {
    testing = await createMailTestingModule({ SMTP_URL: smtp.url, DATA_DIR: dataDir(), ...env }, [
      MailModule,
    ]);
    return testing.moduleRef.get(AdminNotifier);
  };

  it('renders a notice to ADMIN_NOTIFY_EMAIL naming workflow, step, error and run, and nothing more', async () => {
    const notice = (await notifier({ ADMIN_NOTIFY_EMAIL: 'ops@example.com' })).renderFailureNotice(failure);
    expect(notice).not.toBeNull();
    expect(notice!.to).toBe('ops@example.com');
    expect(notice!.subject).toBe('Workflow "Order <intake>" failed');
    expect(notice!.text).toBe(
      [
        'A run of the workflow "Order <intake>" failed.',
        '',
        'Workflow: Order <intake> (wf-123)',
        'Failed step: callCrm',
        'Error: HTTP_STATUS: HTTP 503 from crm.example.com',
        'Run ID: run-456',
        '',
      ].join('\n'),
    );
    expect(notice!.html).toContain('<p>A run of the workflow &quot;Order &lt;intake&gt;&quot; failed.</p>');
    expect(notice!.html).toContain('<td>Order &lt;intake&gt; (wf-123)</td>');
    expect(notice!.html).not.toContain('<intake>');
    expect(JSON.stringify(notice)).not.toContain('very-secret-token');
    expect(JSON.stringify(notice)).not.toMatch(/\.ts:\d+|retryable|details|authorization/);
  });

  it('is null without ADMIN_NOTIFY_EMAIL, and notifyFailure then sends nothing', async () => {
    const admin = await notifier({});
    expect(admin.renderFailureNotice(failure)).toBeNull();
    await expect(admin.notifyFailure(failure)).resolves.toBeNull();
    expect(smtp.messages).toHaveLength(0);
  });

  it('speaks DEFAULT_LOCALE and never expands i18n syntax found in a workflow name', async () => {
    const admin = await notifier({ ADMIN_NOTIFY_EMAIL: 'ops@example.com', DEFAULT_LOCALE: 'hu' });
    const notice = admin.renderFailureNotice({
      ...failure,
      workflowName: 'Rendelés $t(errors.INTERNAL_ERROR) {workflowName}',
      stepName: null,
      error: 'timeout',
    });
    expect(notice!.subject).toBe(
      'Hiba a(z) "Rendelés $t(errors.INTERNAL_ERROR) {workflowName}" munkafolyamatban',
    );
    expect(notice!.text).toContain('Hibás lépés: -\n');
    expect(notice!.text).toContain('Hiba: timeout\n');
  });

  it('notifyFailure sends the notice through MailService', async () => {
    const sent = await (await notifier({ ADMIN_NOTIFY_EMAIL: 'ops@example.com' })).notifyFailure(failure);
    const [message] = await smtp.waitFor(1);
    expect(sent?.messageId).toBe(message.headers['message-id']);
    expect(message.envelope.to).toEqual(['ops@example.com']);
    expect(message.subject).toBe('Workflow "Order <intake>" failed');
    expect(message.text).toContain('Run ID: run-456');
  });

  it('notifyFailure never throws when the notice cannot be sent', async () => {
    const admin = await notifier({ ADMIN_NOTIFY_EMAIL: 'ops@example.com', SMTP_URL: 'smtp://127.0.0.1:1' });
    await expect(admin.notifyFailure(failure)).resolves.toBeNull();
    expect(
      testing!.logger.lines.some((line) => line.includes('Failure notice for run run-456 not sent')),
    ).toBe(true);
  });
});
