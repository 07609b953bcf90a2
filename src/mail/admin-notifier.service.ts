import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { Translator } from '../common/i18n/translator.service';
import { MailService, type OutgoingMail, type SentMail } from './mail.service';
import { escapeHtml, headerText } from './mail-text';

/** What an administrator learns about a failed run: nothing else reaches the message. */
export interface WorkflowFailure {
  workflowName: string;
  workflowId: string;
  runId: string;
  /** The failed step; null when the run failed outside a step. */
  stepName: string | null;
  /**
   * The error as the step log stores it (env values already redacted): a `StepError`/`Error`
   * (only `code` and `message` are read, never `details`, `cause` or the stack), `{code, message}` or text.
   */
  error: unknown;
}

const MAX_ERROR_LENGTH = 2000;

/** Renders (and sends) the `errorHandling.notify` e-mail to ADMIN_NOTIFY_EMAIL, in DEFAULT_LOCALE. */
@Injectable()
export class AdminNotifier {
  private readonly logger = new Logger(AdminNotifier.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly translator: Translator,
    private readonly mail: MailService,
  ) {}

  /** The notice, or null when ADMIN_NOTIFY_EMAIL is not set (nobody to tell). */
  renderFailureNotice(failure: WorkflowFailure): OutgoingMail | null {
    const to = this.config.adminNotifyEmail;
    if (!to) return null;
    const t = (key: string, values: Record<string, string> = {}) => this.translate(key, values);
    const rows: [string, string][] = [
      [t('workflow'), `${failure.workflowName} (${failure.workflowId})`],
      [t('step'), failure.stepName ?? '-'],
      [t('error'), describeError(failure.error)],
      [t('run'), failure.runId],
    ];
    const intro = t('intro', { workflowName: failure.workflowName });
    const text = [intro, '', ...rows.map(([label, value]) => `${label}: ${value}`), ''].join('\n');
    const html = [
      '<!DOCTYPE html><html><body>',
      `<p>${escapeHtml(intro)}</p>`,
      '<table>',
      ...rows.map(
        ([label, value]) =>
          `<tr><th align="left">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`,
      ),
      '</table>',
      '</body></html>',
    ].join('\n');
    return { to, subject: headerText(t('subject', { workflowName: failure.workflowName })), text, html };
  }

  /**
   * Inserts the values after translating: the i18n library would expand `$t(...)` found in an
   * argument, and a workflow name is not ours to trust that far.
   */
  private translate(key: string, values: Record<string, string>): string {
    const names = Object.keys(values);
    const markers = Object.fromEntries(names.map((name, i) => [name, `\u0001${i}\u0001`]));
    let text = this.translator.translate(`mail.failureNotice.${key}`, this.config.defaultLocale, markers);
    names.forEach((name, i) => (text = text.split(`\u0001${i}\u0001`).join(values[name])));
    return text;
  }

  /** Renders and sends the notice; never throws (a failed notice is logged, the run's outcome stands). */
  async notifyFailure(failure: WorkflowFailure): Promise<SentMail | null> {
    const notice = this.renderFailureNotice(failure);
    if (!notice) return null;
    try {
      return await this.mail.send(notice);
    } catch (error) {
      this.logger.warn(`Failure notice for run ${failure.runId} not sent: ${(error as Error).message}`);
      return null;
    }
  }
}

/** `CODE: message`, from the error's own code and message only. */
export function describeError(error: unknown): string {
  let text: string;
  if (typeof error === 'string') text = error;
  else if (error && typeof error === 'object') {
    const { code, message } = error as { code?: unknown; message?: unknown };
    const parts = [typeof code === 'string' ? code : '', typeof message === 'string' ? message : ''];
    text = parts.filter(Boolean).join(': ');
  } else text = '';
  text = text || 'unknown error';
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH)}…` : text;
}
