import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailTestingModule, type MailTestingModule } from '../../../../test/utils/mail-testing';
import { startSmtpTestServer, type SmtpTestServer } from '../../../../test/utils/smtp-test-server';
import { MailService, type OutgoingMail } from '../../../mail/mail.service';
import { StepError, createStepTestContext, type StepTestContext, WORKFLOW_STEP } from '../../sdk';
import { NotifyStep } from './notify-step';
import { NotifyStepConfig } from './notify-step.config';
import { NotifyStepModule } from './notify-step.module';

type TestContext = StepTestContext & { held: OutgoingMail[] };

/** The engine's own StepContext (the step test kit); `held` lists the mails the step enqueued. */
function stepContext(
  scope: { input?: Record<string, unknown>; savedData?: unknown; formTitle?: string } = {},
): TestContext {
  const context = createStepTestContext({
    input: scope.input,
    provided: scope.savedData ? { savedData: scope.savedData } : {},
    formTitle: scope.formTitle ?? 'Contact form',
    workflow: { id: 'wf-1', name: 'Contact workflow' },
    step: { name: 'mail', type: 'notify', index: 2 },
  });
  return Object.defineProperty(context, 'held', {
    get: () =>
      context.enqueued
        .filter((effect) => effect.kind === 'mail')
        .map((effect) => effect.payload as unknown as OutgoingMail),
  }) as TestContext;
}

/** The config as the runner hands it over: validated against the config class. */
function config(email: Record<string, unknown>): NotifyStepConfig {
  const instance = plainToInstance(NotifyStepConfig, { email });
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true });
  expect(errors).toEqual([]);
  return instance;
}

function configErrors(email: unknown): string[] {
  const instance = plainToInstance(NotifyStepConfig, { email });
  const flatten = (errors: ReturnType<typeof validateSync>, prefix = ''): string[] =>
    errors.flatMap((error) => [
      ...Object.keys(error.constraints ?? {}).map((rule) => `${prefix}${error.property}:${rule}`),
      ...flatten(error.children ?? [], `${prefix}${error.property}.`),
    ]);
  return flatten(validateSync(instance, { whitelist: true, forbidNonWhitelisted: true }));
}

describe('NotifyStep', () => {
  let smtp: SmtpTestServer;
  let testing: MailTestingModule;
  let step: NotifyStep;

  beforeAll(async () => {
    smtp = await startSmtpTestServer();
    testing = await createMailTestingModule(
      { SMTP_URL: smtp.url, DATA_DIR: mkdtempSync(join(tmpdir(), 'fdws-notify-')) },
      [NotifyStepModule],
    );
    step = testing.moduleRef.get(NotifyStep);
  });
  afterAll(async () => {
    await testing.moduleRef.close();
    await smtp.close();
  });
  beforeEach(() => smtp.messages.splice(0));

  it('is a @WorkflowStep provider of type notify, replayable (its mail goes through the outbox), leaving email.template raw', () => {
    expect(Reflect.getMetadata(WORKFLOW_STEP, NotifyStep)).toMatchObject({
      type: 'notify',
      config: NotifyStepConfig,
      replayable: true,
      rawFields: ['email.template'],
    });
    expect(step).toBeInstanceOf(NotifyStep);
  });

  it('html-table: escapes every key and value, holds the mail and sends nothing itself', async () => {
    const context = stepContext({
      input: {
        name: '<script>alert(1)</script>',
        '<script>key</script>': 'value & more',
        tags: ['a', '<b>'],
        address: { city: 'Pécs "centre"' },
        note: 'line 1\nline 2',
        empty: null,
      },
    });
    const outcome = await step.execute(
      context,
      config({ to: 'boss@example.com', subject: 'New submission', format: 'html-table' }),
    );

    expect(outcome.result).toEqual({ to: 'boss@example.com', subject: 'New submission', queued: true });
    expect(context.held).toHaveLength(1);
    const { html, text, to, subject } = context.held[0];
    expect({ to, subject }).toEqual({ to: 'boss@example.com', subject: 'New submission' });
    expect(html).not.toMatch(/<script|<b>/);
    expect(html).toContain(
      '<th align="left" valign="top">name</th><td>&lt;script&gt;alert(1)&lt;/script&gt;</td>',
    );
    expect(html).toContain(
      '<th align="left" valign="top">&lt;script&gt;key&lt;/script&gt;</th><td>value &amp; more</td>',
    );
    expect(html).toContain('<td>[&quot;a&quot;,&quot;&lt;b&gt;&quot;]</td>');
    expect(html).toContain('<td>{&quot;city&quot;:&quot;Pécs \\&quot;centre\\&quot;&quot;}</td>');
    expect(html).toContain('<td>line 1<br>line 2</td>');
    expect(html).toContain('<th align="left" valign="top">empty</th><td></td>');
    expect(text).toContain('name: <script>alert(1)</script>\n');

    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(smtp.messages).toHaveLength(0);
  });

  it('held mail is what the runner later sends: it arrives escaped through MailService', async () => {
    const context = stepContext({ input: { comment: '<img src=x onerror=alert(1)>' } });
    await step.execute(context, config({ to: 'a@example.com,b@example.com', subject: 'Hi' }));
    await testing.moduleRef.get(MailService).send(context.held[0]);
    const [message] = await smtp.waitFor(1);
    expect(message.envelope.to).toEqual(['a@example.com', 'b@example.com']);
    expect(message.html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(message.html).not.toContain('<img');
  });

  it('lists the saved record data when a save step ran, else the input; email.fields selects and orders', async () => {
    const saved = stepContext({
      input: { a: 'from input' },
      savedData: { _id: 'rec-1', data: { a: 'saved', b: 2, c: true } },
    });
    await step.execute(saved, config({ to: 'x@example.com', subject: 's', format: 'plain' }));
    expect(saved.held[0].text).toBe('a: saved\nb: 2\nc: true\n');

    const selected = stepContext({ input: { a: 1, b: 2, c: 3 } });
    await step.execute(
      selected,
      config({ to: 'x@example.com', subject: 's', format: 'plain', fields: ['c', 'a', 'missing'] }),
    );
    expect(selected.held[0].text).toBe('c: 3\na: 1\nmissing: \n');
  });

  it('plain: key: value lines and no HTML part', async () => {
    const context = stepContext({ input: { name: 'Ann <ann@example.com>', qty: 3 } });
    await step.execute(context, config({ to: 'x@example.com', subject: 'Plain', format: 'plain' }));
    expect(context.held[0]).toEqual({
      to: 'x@example.com',
      subject: 'Plain',
      text: 'name: Ann <ann@example.com>\nqty: 3\n',
    });
  });

  it('template: renders the step’s own template with inserted values HTML-escaped', async () => {
    const context = stepContext({ input: { name: '<img src=x onerror=alert(1)>' } });
    await step.execute(
      context,
      config({
        to: 'x@example.com',
        subject: 'T',
        format: 'template',
        template: '<h1>Hello {{input.name}}</h1><p>{{formTitle}}</p>',
      }),
    );
    expect(context.held[0].html).toBe(
      '<h1>Hello &#60;img src=x onerror=alert(1)&#62;</h1><p>Contact form</p>',
    );
    expect(context.held[0].text).toBeUndefined();
  });

  it('template: renders a named template from i18n/templates', async () => {
    const context = stepContext({ formTitle: 'Q&A <form>', savedData: { _id: 'rec-9', data: {} } });
    await step.execute(
      context,
      config({ to: 'x@example.com', subject: 'T', format: 'template', templateName: 'submission-received' }),
    );
    expect(context.held[0].html).toContain('<strong>Q&#38;A &#60;form&#62;</strong>');
    expect(context.held[0].html).toContain('Record: rec-9');
    expect(context.held[0].html).toContain('Submitted by: user@example.com');
  });

  it.each([
    ['not an address', 'not-an-address'],
    ['one bad address among good ones', 'a@example.com, nope'],
    ['a header smuggled into the address', 'a@example.com\r\nBcc: evil@example.com'],
    ['a display name', 'Boss <boss@example.com>'],
    ['an empty rendering (missing path)', ''],
    ['a null rendering (single missing token)', null],
    ['too many recipients', Array.from({ length: 51 }, (_, i) => `u${i}@example.com`).join(',')],
  ])('refuses %s with INVALID_RECIPIENT (not retryable) and holds nothing', async (_, to) => {
    const context = stepContext({ input: { a: 1 } });
    const valid = config({ to: 'placeholder@example.com', subject: 's' });
    const failure = await step
      .execute(context, { email: { ...valid.email, to: to as string } })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StepError);
    expect(failure).toMatchObject({ code: 'INVALID_RECIPIENT', retryable: false });
    expect(context.held).toHaveLength(0);
  });

  it('accepts an array of addresses (a single-token template keeps the array) and drops duplicates', async () => {
    const context = stepContext();
    const valid = config({ to: '{{input.emails}}', subject: 's' });
    const outcome = await step.execute(context, {
      email: { ...valid.email, to: ['a@example.com', 'b@example.com', 'a@example.com'] },
    });
    expect(outcome.result.to).toBe('a@example.com, b@example.com');
  });

  it('keeps the rendered subject on one line and within 998 characters', async () => {
    const context = stepContext();
    const valid = config({ to: 'a@example.com', subject: 's' });
    await step.execute(context, {
      email: { ...valid.email, subject: `Hi\r\nBcc: evil@example.com ${'x'.repeat(2000)}` },
    });
    expect(context.held[0].subject).toMatch(/^Hi Bcc: evil@example.com x+$/);
    expect(context.held[0].subject).toHaveLength(998);
  });
});

describe('NotifyStepConfig', () => {
  it('accepts templated recipients and defaults the format to html-table', () => {
    expect(configErrors({ to: '{{input.email}}, boss@example.com', subject: 'New: {{input.name}}' })).toEqual(
      [],
    );
    expect(
      plainToInstance(NotifyStepConfig, { email: { to: 'a@example.com', subject: 's' } }).email.format,
    ).toBe('html-table');
  });

  it('refuses what cannot work', () => {
    expect(configErrors(undefined)).toContain('email:isDefined');
    expect(configErrors({ subject: 's' })).toContain('email.to:recipients');
    expect(configErrors({ to: ['a@example.com', 'nope'], subject: 's' })).toContain('email.to:recipients');
    expect(configErrors({ to: 'x'.repeat(4001) + '{{input.a}}', subject: 's' })).toContain(
      'email.to:recipients',
    );
    expect(configErrors({ to: 'not-an-address', subject: 's' })).toContain('email.to:recipients');
    expect(configErrors({ to: 'a@example.com' })).toContain('email.subject:isString');
    expect(configErrors({ to: 'a@example.com', subject: 'x'.repeat(999) })).toContain(
      'email.subject:maxLength',
    );
    expect(configErrors({ to: 'a@example.com', subject: 's', format: 'pdf' })).toContain('email.format:isIn');
    expect(configErrors({ to: 'a@example.com', subject: 's', format: 'template' })).toContain(
      'email.template:isString',
    );
    expect(configErrors({ to: 'a@example.com', subject: 's', fields: ['a', 3] })).toContain(
      'email.fields:isString',
    );
    expect(configErrors({ to: 'a@example.com', subject: 's', extra: 1 })).toContain(
      'email.extra:whitelistValidation',
    );
  });

  it('templateName must name an existing file in i18n/templates, never a path, and not come with template', () => {
    const base = { to: 'a@example.com', subject: 's', format: 'template' };
    expect(configErrors({ ...base, templateName: 'submission-received' })).toEqual([]);
    expect(configErrors({ ...base, templateName: 'no-such-template' })).toContain(
      'email.templateName:mailTemplateName',
    );
    expect(configErrors({ ...base, templateName: '../en/errors' })).toContain(
      'email.templateName:mailTemplateName',
    );
    expect(configErrors({ ...base, templateName: '{{input.t}}' })).toContain(
      'email.templateName:mailTemplateName',
    );
    expect(configErrors({ ...base, templateName: 'submission-received', template: '<p>x</p>' })).toContain(
      'email.templateName:mailTemplateName',
    );
  });
});
