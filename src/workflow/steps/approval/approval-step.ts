import { headerText } from '../../../mail/mail-text';
import {
  StepError,
  type StepContext,
  type StepOutcome,
  type WorkflowStepHandler,
  WorkflowStep,
} from '../../sdk';
import { stepRecipients } from '../step-recipients';
import { ApprovalStepConfig, type ApprovalNotifyConfig } from './approval-step.config';

export interface ApprovalResult {
  approved: boolean;
  /** Who decided; null when the timeout decided. */
  decidedBy: { userId: string; email: string } | null;
  /** Whose run it is: the user who started it (the run's `userId`). */
  startedBy: { userId: string; email: string } | null;
  decidedAt: string;
  comment: string | null;
  timedOut?: true;
}

/** Whose run it is, from the run's context: for a timeout, and a decision stored without it. */
function starterOf(context: StepContext): ApprovalResult['startedBy'] {
  const user = context.ctx.user;
  return user ? { userId: user.userId, email: user.email } : null;
}

/** The route a decider calls, as the mail links it. */
export function decisionPath(runId: string, step: string): string {
  return `/api/workflow/runs/${runId}/steps/${encodeURIComponent(step)}/decision`;
}

/**
 * `approval`: pauses the run (stored `waiting`, no process holds it) until an allowed user decides
 * through `POST /api/workflow/runs/:runId/steps/:stepName/decision`, or until `timeoutMs` passes and
 * `onTimeout` decides. Approved: the step succeeds with the decision as its result; rejected: it
 * fails (APPROVAL_REJECTED / APPROVAL_TIMED_OUT, the decision still under `results.<step>`), and
 * `onError` applies. The optional notification is a mail effect sent when the run pauses. The
 * run's starter may not decide unless named in `approvers.users` or `allowSelfApproval` is set.
 */
@WorkflowStep({
  type: 'approval',
  config: ApprovalStepConfig,
  // Run again after a crash, it only pauses again (or takes the decision already stored).
  replayable: true,
  rawFields: ['notify.text'],
  description: 'Waits for a decision by an allowed user (or a timeout) before the run goes on.',
})
export class ApprovalStep implements WorkflowStepHandler<ApprovalStepConfig, ApprovalResult | null> {
  async execute(
    context: StepContext,
    config: ApprovalStepConfig,
  ): Promise<StepOutcome<ApprovalResult | null>> {
    const signal = context.resumedWith;
    if (!signal) {
      if (config.notify) this.notify(context, config.notify);
      const until = config.timeoutMs === undefined ? null : Date.now() + config.timeoutMs;
      const deciders = {
        roles: config.approvers.roles ?? [],
        users: config.approvers.users ?? [],
        allowSelfApproval: config.allowSelfApproval ?? false,
      };
      return { result: null, wait: { deciders, until } };
    }
    if (signal.kind === 'timeout') {
      const approved = config.onTimeout === 'approve';
      const result: ApprovalResult = {
        approved,
        decidedBy: null,
        startedBy: starterOf(context),
        decidedAt: signal.at,
        comment: null,
        timedOut: true,
      };
      if (approved) return { result };
      throw StepError.fatal('APPROVAL_TIMED_OUT', `Nobody decided within ${config.timeoutMs} ms`, { result });
    }
    const result: ApprovalResult = {
      approved: signal.approve,
      decidedBy: signal.decidedBy,
      startedBy: signal.startedBy ?? starterOf(context),
      decidedAt: signal.decidedAt,
      comment: signal.comment,
    };
    if (!signal.approve)
      throw StepError.fatal('APPROVAL_REJECTED', `Rejected by ${signal.decidedBy.email}`, { result });
    return { result };
  }

  private notify(context: StepContext, notify: ApprovalNotifyConfig): void {
    const to = stepRecipients(notify.to).join(', ');
    const link = `${(notify.baseUrl ?? '').replace(/\/+$/, '')}${decisionPath(context.runId, context.step.name)}`;
    const approval = { link, runId: context.runId, step: context.step.name };
    const text = notify.text ? context.render(notify.text, { extra: { approval } }) : '';
    const body = text.includes(link) ? text : `${text}${text ? '\n\n' : ''}Decide: ${link}`;
    context.effects.enqueue({
      kind: 'mail',
      payload: { to, subject: headerText(notify.subject), text: body },
    });
  }
}
