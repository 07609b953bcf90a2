import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { createStepTestContext, StepError, type StepSignal } from '../../sdk';
import { ApprovalStep } from './approval-step';
import { ApprovalStepConfig } from './approval-step.config';

const config = (extra: Record<string, unknown> = {}) =>
  plainToInstance(ApprovalStepConfig, { approvers: { roles: ['manager'], users: ['u-9'] }, ...extra });

const context = (resumedWith: StepSignal | null = null) =>
  createStepTestContext({
    input: { name: 'Ann' },
    step: { name: 'approve', type: 'approval', index: 1 },
    resumedWith,
  });

describe('ApprovalStep (step test kit)', () => {
  const step = new ApprovalStep();

  it('first run: pauses the run for the named deciders, with its deadline, and mails a link', async () => {
    const ctx = context();
    const before = Date.now();
    const outcome = await step.execute(
      ctx,
      config({
        timeoutMs: 60_000,
        notify: {
          to: 'boss@example.com',
          subject: 'Approve',
          text: 'Order of {{input.name}}: {{approval.link}}',
          baseUrl: 'https://forms.example.com/',
        },
      }),
    );
    expect(outcome.wait).toEqual({
      deciders: { roles: ['manager'], users: ['u-9'], allowSelfApproval: false },
      until: expect.any(Number),
    });
    expect(outcome.wait!.until).toBeGreaterThanOrEqual(before + 60_000);
    expect(ctx.enqueued).toEqual([
      {
        kind: 'mail',
        payload: {
          to: 'boss@example.com',
          subject: 'Approve',
          text: 'Order of Ann: https://forms.example.com/api/workflow/runs/run-1/steps/approve/decision',
        },
      },
    ]);
  });

  it('no timeout: waits without a deadline; no notify: no mail', async () => {
    const ctx = context();
    expect((await step.execute(ctx, config())).wait).toEqual({
      deciders: { roles: ['manager'], users: ['u-9'], allowSelfApproval: false },
      until: null,
    });
    expect(ctx.enqueued).toEqual([]);
  });

  it('allowSelfApproval: carried into the pause, so the decision route lets the starter decide', async () => {
    const outcome = await step.execute(context(), config({ allowSelfApproval: true }));
    expect(outcome.wait!.deciders).toEqual({ roles: ['manager'], users: ['u-9'], allowSelfApproval: true });
  });

  it('resumed by a decision: approved is the result; rejected fails the step with the decision as its result', async () => {
    const decision = {
      kind: 'decision' as const,
      comment: 'ok',
      decidedBy: { userId: 'u-9', email: 'boss@example.com' },
      decidedAt: '2026-01-01T00:00:00.000Z',
      startedBy: { userId: 'u-1', email: 'starter@example.com' },
    };
    expect(await step.execute(context({ ...decision, approve: true }), config())).toEqual({
      result: {
        approved: true,
        decidedBy: decision.decidedBy,
        startedBy: decision.startedBy,
        decidedAt: decision.decidedAt,
        comment: 'ok',
      },
    });
    // A decision stored before it named the starter: the run's own caller is whose run it is.
    const { startedBy: _kept, ...older } = decision;
    expect(await step.execute(context({ ...older, approve: true }), config())).toMatchObject({
      result: { startedBy: { userId: 'user-1', email: 'user@example.com' } },
    });
    const rejected = step.execute(context({ ...decision, approve: false }), config());
    await expect(rejected).rejects.toBeInstanceOf(StepError);
    await expect(rejected).rejects.toMatchObject({
      code: 'APPROVAL_REJECTED',
      retryable: false,
      result: { approved: false, comment: 'ok' },
    });
  });

  it('resumed by its deadline: onTimeout decides (reject by default)', async () => {
    const timeout = { kind: 'timeout' as const, at: '2026-01-01T00:00:00.000Z' };
    expect(await step.execute(context(timeout), config({ onTimeout: 'approve' }))).toEqual({
      result: {
        approved: true,
        decidedBy: null,
        startedBy: { userId: 'user-1', email: 'user@example.com' },
        decidedAt: timeout.at,
        comment: null,
        timedOut: true,
      },
    });
    await expect(step.execute(context(timeout), config({ timeoutMs: 5 }))).rejects.toMatchObject({
      code: 'APPROVAL_TIMED_OUT',
      result: { approved: false, timedOut: true },
    });
  });

  it('config: approvers required, onTimeout and recipients checked', () => {
    const problems = (value: unknown) =>
      validateSync(plainToInstance(ApprovalStepConfig, value), {
        whitelist: true,
        forbidNonWhitelisted: true,
      }).map((error) => error.property);
    expect(problems({})).toEqual(['approvers']);
    expect(problems({ approvers: {}, onTimeout: 'maybe' })).toEqual(['onTimeout']);
    expect(problems({ approvers: {}, notify: { to: 'not an address', subject: 'x' } })).toEqual(['notify']);
    expect(problems({ approvers: {}, allowSelfApproval: 'yes' })).toEqual(['allowSelfApproval']);
    expect(
      problems({
        approvers: { roles: ['a'] },
        timeoutMs: 1000,
        onTimeout: 'reject',
        allowSelfApproval: true,
      }),
    ).toEqual([]);
  });
});
