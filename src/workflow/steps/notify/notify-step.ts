import { readMailTemplate } from '../../../mail/mail-templates';
import { headerText } from '../../../mail/mail-text';
import {
  StepError,
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
  async execute(context: StepContext, config: NotifyStepConfig): Promise<StepOutcome<NotifyStepResult>> {
    const email = config.email;
    const to = stepRecipients(email.to).join(', ');
    const subject = headerText(formatValue(email.subject));
    const mail: OutgoingMail = { to, subject, ...(await this.body(context, email)) };
    context.effects.enqueue({ kind: 'mail', payload: { ...mail } });
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
