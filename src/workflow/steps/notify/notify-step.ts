import { readMailTemplate } from '../../../mail/mail-templates';
import { headerText } from '../../../mail/mail-text';
import { parseRecipients } from '../../../mail/recipients';
import { StepError } from '../step-error';
import type { OutgoingMail, StepContext, StepOutcome, WorkflowStepHandler } from '../step-handler';
import { WorkflowStep } from '../workflow-step.decorator';
import { fieldEntries, formatValue, htmlTable, plainText, submittedFields } from './notify-body';
import { NotifyStepConfig, type NotifyEmailConfig } from './notify-step.config';

export interface NotifyStepResult {
  /** The recipients, normalized (`a@example.com, b@example.com`). */
  to: string;
  subject: string;
  /** Always true: the message is held and sent when the run ends (dropped on rollback). */
  queued: true;
}

/**
 * `notify`: composes an e-mail and hands it to the run (`holdMail`); the runner sends held mail when
 * the run ends and drops it on rollback, so the step never sends and needs no `compensate`.
 */
@WorkflowStep({
  type: 'notify',
  config: NotifyStepConfig,
  replayable: false,
  rawFields: ['email.template'],
  description: 'Sends an e-mail (html-table, plain or template) when the run ends.',
})
export class NotifyStep implements WorkflowStepHandler<NotifyStepConfig, NotifyStepResult> {
  async execute(context: StepContext, config: NotifyStepConfig): Promise<StepOutcome<NotifyStepResult>> {
    const email = config.email;
    const recipients = parseRecipients(email.to);
    if (!recipients.ok) {
      throw new StepError(`Invalid recipient: ${recipients.reason}`, {
        code: 'INVALID_RECIPIENT',
        retryable: false,
        details: {
          reason: recipients.reason,
          ...(recipients.invalid ? { invalid: recipients.invalid } : {}),
        },
      });
    }
    const to = recipients.addresses.join(', ');
    const subject = headerText(formatValue(email.subject));
    const mail: OutgoingMail = { to, subject, ...(await this.body(context, email)) };
    context.holdMail(mail);
    return { result: { to, subject, queued: true } };
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
