import { Logger } from '@nestjs/common';
import { databaseThatCanGoAway } from '../utils/database-outage';
import { useAppSuite } from '../utils/app-suite';
import type { SmtpTestServer } from '../utils/smtp-test-server';
import { createTestApp, type TestApp } from '../utils/test-app';
import { createSteps, run } from '../utils/workflow-api';
import { untilTrue } from '../utils/until';

/** The structured lines (`{msg, ...ids}`) a Logger method was called with, whose message matches. */
function lines(spy: jest.SpyInstance, pattern: RegExp): Record<string, unknown>[] {
  return spy.mock.calls
    .map(([message]) => message as unknown)
    .filter(
      (message): message is Record<string, unknown> =>
        typeof message === 'object' &&
        message !== null &&
        pattern.test(String((message as { msg?: unknown }).msg)),
    );
}

const until = (done: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000) =>
  untilTrue(done, what, { timeoutMs });

describe('operations log lines: undelivered effects, SMTP failing and back, failed runs', () => {
  let warn: jest.SpyInstance;
  let error: jest.SpyInstance;
  let log: jest.SpyInstance;
  // Registered before the suite's hooks, so the spies see the app's start too.
  beforeAll(() => {
    warn = jest.spyOn(Logger.prototype, 'warn');
    error = jest.spyOn(Logger.prototype, 'error');
    log = jest.spyOn(Logger.prototype, 'log');
  });
  afterAll(() => {
    warn.mockRestore();
    error.mockRestore();
    log.mockRestore();
  });
  let t: TestApp;
  let admin: string;
  let configId: string;
  let smtp: SmtpTestServer;
  useAppSuite((s) => ({ t, admin, configId, smtp } = s), {
    smtp: { rejectRecipients: ['nobody@example.com'] },
    env: { OUTBOX_POLL_MS: '100', OUTBOX_RETRY_BASE_MS: '100', WORKFLOW_WORKERS: '0' },
    forms: 1,
    seed: 'once',
  });

  const mailTo = (to: string) =>
    createSteps(t, admin, [{ name: 'mail', type: 'notify', config: { email: { to, subject: 'Hi' } } }]);

  it('SMTP down: each failed delivery attempt is a warn line with its ids, SMTP failing is one line and its recovery one line', async () => {
    const workflowId = await mailTo('buyer@example.com');
    await smtp.behave('refuse');
    const runs: string[] = [];
    for (const name of ['a', 'b'])
      runs.push((await run(t, admin, workflowId, configId, { name, qty: 1 })).runId);
    await until(
      () => runs.every((runId) => lines(warn, /attempt 2 failed/).some((line) => line.runId === runId)),
      'two failed attempts of each mail',
    );
    expect(lines(warn, /attempt 1 failed/).find((line) => line.runId === runs[0])).toEqual({
      msg: expect.stringContaining(
        `workflow run ${runs[0]}, step mail, mail effect 0: attempt 1 failed (MAIL_DELIVERY_FAILED)`,
      ),
      runId: runs[0],
      step: 'mail',
      kind: 'mail',
      effect: 0,
      attempt: 1,
      code: 'MAIL_DELIVERY_FAILED',
      retryInMs: 100,
    });
    expect(lines(warn, /^SMTP is failing/)).toEqual([
      {
        msg: expect.stringMatching(
          /^SMTP is failing \(.*could not be reached.*\): mail effects wait in the outbox/,
        ),
        kind: 'mail',
        code: 'MAIL_DELIVERY_FAILED',
        dependency: 'SMTP',
      },
    ]);
    expect(lines(log, /^SMTP accepts/)).toHaveLength(0);

    await smtp.behave('accept');
    await smtp.waitFor(2, 20_000);
    await until(() => lines(log, /^SMTP accepts/).length > 0, 'the SMTP recovery line');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lines(log, /^SMTP accepts/)).toEqual([
      {
        msg: 'SMTP accepts mail effects again: the outbox sends what waited',
        kind: 'mail',
        dependency: 'SMTP',
      },
    ]);
    expect(lines(warn, /^SMTP is failing/)).toHaveLength(1);
  }, 60_000);

  it('a mail the server refuses (550) is undelivered: one error line with the run, step, kind, attempt and code', async () => {
    const workflowId = await mailTo('nobody@example.com');
    const { runId } = await run(t, admin, workflowId, configId, { name: 'c', qty: 1 });
    await until(() => lines(error, /undelivered/).some((line) => line.runId === runId), 'the give-up line');
    expect(lines(error, /undelivered/).filter((line) => line.runId === runId)).toEqual([
      {
        msg: expect.stringContaining(
          `workflow run ${runId}, step mail, mail effect 0 undelivered, given up (MAIL_DELIVERY_FAILED)`,
        ),
        runId,
        step: 'mail',
        kind: 'mail',
        effect: 0,
        attempt: 1,
        code: 'MAIL_DELIVERY_FAILED',
      },
    ]);
    // A refusal is the message's fault, not a sign that SMTP is down.
    expect(lines(warn, /^SMTP is failing/)).toHaveLength(1);
  }, 30_000);

  it('a failed run is one warn line with the workflow, run, step and code', async () => {
    const workflowId = await createSteps(t, admin, [
      { name: 'call', type: 'api', config: { url: 'http://10.255.255.1/hook' } },
    ]);
    const body = await run(t, admin, workflowId, configId, { name: 'd', qty: 1 });
    expect(body).toMatchObject({ status: 'failed' });
    const code = body.steps[0].error.code;
    expect(lines(warn, /ended failed/).filter((line) => line.runId === body.runId)).toEqual([
      {
        msg: `workflow ${workflowId} run ${body.runId} ended failed at step call (${code})`,
        workflowId,
        runId: body.runId,
        status: 'failed',
        step: 'call',
        code,
        requestId: expect.any(String),
      },
    ]);
  });
});

describe('operations log lines: the database going away and coming back', () => {
  let warn: jest.SpyInstance;
  let log: jest.SpyInstance;
  beforeAll(() => {
    warn = jest.spyOn(Logger.prototype, 'warn');
    log = jest.spyOn(Logger.prototype, 'log');
  });
  afterAll(() => {
    warn.mockRestore();
    log.mockRestore();
  });

  it('one warn line when it goes (however many requests fail), one line when it answers again (PostgreSQL)', async () => {
    const outage = await databaseThatCanGoAway();
    const t = await createTestApp({ database: outage.database, env: { WORKFLOW_WORKERS: '0' } });
    try {
      await outage.takeAway();
      for (let i = 0; i < 3; i++) {
        expect((await t.request({ method: 'GET', url: '/health/ready' })).statusCode).toBe(503);
        const login = await t.request({
          method: 'POST',
          url: '/auth/login',
          payload: { email: 'a@example.com', password: 'password-123' },
        });
        expect(login.json().code).toBe('DATABASE_UNAVAILABLE');
      }
      expect(lines(warn, /^Database is unavailable/)).toEqual([
        {
          msg: expect.stringMatching(/^Database is unavailable \(.+\): requests that need it answer 503/),
          dependency: 'database',
          driver: t.database.client.driver,
          code: 'DATABASE_UNAVAILABLE',
        },
      ]);
      // The SQL text and parameters of the failed query are not in the line.
      expect(String(lines(warn, /^Database is unavailable/)[0].msg)).not.toMatch(/select|insert|password/i);
      if (!outage.bringBack) return; // a closed PGlite does not come back
      await outage.bringBack();
      await until(() => lines(log, /^Database is back/).length > 0, 'the recovery line', 10_000);
      expect((await t.request({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
      expect(lines(log, /^Database is back/)).toEqual([
        {
          msg: expect.stringMatching(/^Database is back after \d+ s$/),
          dependency: 'database',
          driver: 'postgres',
          downForMs: expect.any(Number),
        },
      ]);
      expect(lines(warn, /^Database is unavailable/)).toHaveLength(1);
    } finally {
      await t.close().catch(() => undefined);
      await outage.dispose();
    }
  }, 30_000);
});
