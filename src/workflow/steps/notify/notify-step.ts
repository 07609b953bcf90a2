import { readMailTemplate } from '../../../mail/mail-templates';
import { headerText } from '../../../mail/mail-text';
import { Inject, Optional } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config';
import {
  runRecordFiles,
  StepError,
  StepFiles,
  type StepContext,
  type StepOutcome,
  type WorkflowStepHandler,
  WorkflowStep,
} from '../../sdk';
import { stepRecipients } from '../step-recipients';
import type { OutgoingMail } from '../../../mail/mail.service';
import { fieldEntries, formatValue, htmlTable, plainText, submittedFields } from './notify-body';
import { NotifyStepConfig, type NotifyEmailConfig } from './notify-step.config';

export interface NotifyStepResult {
  /** The recipients, normalized (`a@example.com, b@example.com`). */
  to: string;
  subject: string;
  /** Always true: the message goes to the run's outbox, sent once the run commits (dropped on rollback). */
  queued: true;
  /** The names of the files attached (`email.attachFiles`), when any. */
  attached?: string[];
}

/**
 * `notify`: composes an e-mail and asks the run for a `mail` effect (`context.effects.enqueue`): the
 * run's final write puts it into the outbox, which sends it after the commit (retrying while SMTP
 * is down) and never for a rolled-back run, so the step never sends and needs no `compensate`.
 */
@WorkflowStep({
  type: 'notify',
  config: NotifyStepConfig,
  // Replayable: the step only asks for a mail effect, which is sent once its run committed to it
  // (keyed by run, step and index), so running the step again after a crash never mails twice.
  replayable: true,
  rawFields: ['email.template'],
  description: 'Sends an e-mail (html-table, plain or template) when the run ends.',
})
export class NotifyStep implements WorkflowStepHandler<NotifyStepConfig, NotifyStepResult> {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() private readonly files?: StepFiles,
  ) {}

  async execute(context: StepContext, config: NotifyStepConfig): Promise<StepOutcome<NotifyStepResult>> {
    const email = config.email;
    const to = stepRecipients(email.to).join(', ');
    const subject = headerText(formatValue(email.subject));
    const mail: OutgoingMail = { to, subject, ...(await this.body(context, email)) };
    const files = await this.attachedFiles(context, email.attachFiles);
    context.effects.enqueue({ kind: 'mail', payload: { ...mail, ...(files.length > 0 ? { files } : {}) } });
    const attached = files.length > 0 ? { attached: files.map((file) => file.filename) } : {};
    return { result: { to, subject, queued: true, ...attached } };
  }

  /**
   * The files of the run's record to attach, read as the run's caller (the record's read rules),
   * within NOTIFY_ATTACHMENTS_MAX_BYTES together; only their references go to the outbox, the
   * bytes are streamed from the blob store when the mail is sent.
   */
  private async attachedFiles(context: StepContext, attachFiles: boolean | string[] | undefined) {
    if (!attachFiles) return [];
    const fields = Array.isArray(attachFiles) ? attachFiles : undefined;
    const files = await runRecordFiles(this.files, context, 'attachFiles', fields);
    const total = files.reduce((sum, file) => sum + file.size, 0);
    const limit = this.config.notifyAttachmentsMaxBytes;
    if (total > limit)
      throw new StepError(`The files to attach are ${total} bytes together, over ${limit}`, {
        code: 'MAIL_ATTACHMENTS_TOO_LARGE',
        details: { total, limit },
      });
    return files.map((file) => ({
      recordId: file.recordId,
      attachmentId: file.attachmentId,
      filename: file.filename,
      mediaType: file.mediaType,
    }));
  }

  private async body(
    context: StepContext,
    email: NotifyEmailConfig,
  ): Promise<Pick<OutgoingMail, 'html' | 'text'>> {
    const format = email.format ?? 'html-table';
    if (format === 'template') {
      const template = email.template ?? (await this.namedTemplate(email.templateName));
      return { html: context.render(template, { escape: 'html' }) };
    }
    const entries = fieldEntries(submittedFields(context.scope), email.fields);
    if (format === 'plain') return { text: plainText(entries) };
    return { html: htmlTable(entries), text: plainText(entries) };
  }

  private async namedTemplate(name: string | undefined): Promise<string> {
    if (name === undefined) {
      throw new StepError('The template format needs email.template or email.templateName', {
        code: 'TEMPLATE_MISSING',
      });
    }
    try {
      return await readMailTemplate(name);
    } catch {
      throw new StepError(`The mail template "${name}" cannot be read`, {
        code: 'TEMPLATE_NOT_FOUND',
        details: { templateName: name },
      });
    }
  }
}
