import { createConfig } from '../../factories/config.factory';
import { useAppSuite } from '../../utils/app-suite';
import { createSteps, getRun, run } from '../../utils/workflow-api';
import { until } from '../../utils/until';

describe('workflow outbox: mail survives an SMTP outage and is sent exactly once', () => {
  const s = useAppSuite({
    smtp: true,
    env: { OUTBOX_POLL_MS: '100', OUTBOX_RETRY_BASE_MS: '100' },
    users: 1,
    seed: 'once',
  });

  const runOf = (runId: string) => getRun(s.t, s.user.token, runId);

  it('SMTP refuses connections, then answers 451, then accepts: every mail delivered once, with its run’s Message-ID', async () => {
    const configId = await createConfig(s.t, s.admin, { preferences: { saveLimit: null } });
    const workflowId = await createSteps(s.t, s.admin, [
      { name: 'store', type: 'save' },
      {
        name: 'mail',
        type: 'notify',
        config: { email: { to: 'buyer@example.com', subject: 'Order {{input.name}}' } },
      },
    ]);
    await s.smtp.behave('refuse');
    const runIds: string[] = [];
    for (const name of ['a', 'b', 'c']) {
      const body = await run(s.t, s.user.token, workflowId, configId, { name, qty: 1 });
      // The run committed to its mail: it succeeded although SMTP is down.
      expect(body).toMatchObject({ success: true, status: 'success' });
      runIds.push(body.runId);
    }
    for (const runId of runIds)
      expect(await runOf(runId)).toMatchObject({
        status: 'success',
        effects: [
          {
            step: 'mail',
            kind: 'mail',
            state: 'pending',
            lastError: {
              code: 'MAIL_DELIVERY_FAILED',
              message: expect.stringContaining('could not be reached'),
            },
          },
        ],
      });

    await s.smtp.behave('tempfail');
    await until(
      () => runOf(runIds[0]),
      (r) => /\(451\)/.test(r.effects[0].lastError?.message ?? ''),
      'a 451 answer recorded',
    );
    expect(s.smtp.messages).toHaveLength(0);

    await s.smtp.behave('accept');
    await s.smtp.waitFor(3, 20_000);
    for (const runId of runIds)
      await until(
        () => runOf(runId),
        (r) => r.effects[0].state === 'sent',
        `the mail of run ${runId} marked sent`,
      );
    // Given time to send anything twice, nothing more arrives.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(s.smtp.messages).toHaveLength(3);
    expect(s.smtp.messages.map((m) => m.subject).sort()).toEqual(['Order a', 'Order b', 'Order c']);
    expect(s.smtp.messages.map((m) => m.headers['message-id']).sort()).toEqual(
      runIds.map((runId) => `<run.${runId}.1.0@example.com>`).sort(),
    );
    const after = await runOf(runIds[0]);
    expect(after.effects[0]).toMatchObject({ state: 'sent', lastError: null });
    expect(after.effects[0].attempts).toBeGreaterThanOrEqual(3);
  }, 60_000);
});
