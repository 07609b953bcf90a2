import { randomUUID } from 'node:crypto';
import type { CarriedWrite } from '../../../src/database/carried-write';
import { DatabaseRunJournal } from '../../../src/workflow/engine/journal/run-journal';
import type { AttemptOutcome } from '../../../src/workflow/engine/driver/step-attempt';
import { WorkflowEffectsRepository } from '../../../src/workflow/effects/workflow-effects.repository';
import { RunJournalRepository } from '../../../src/workflow/engine/journal/run-journal.repository';
import { RunQueueRepository } from '../../../src/workflow/engine/queue/run-queue.repository';
import { createConfig } from '../../factories/config.factory';
import { adminToken, createUser, type TestUser } from '../../factories/user.factory';
import { startHttpServer, type HttpTestServer } from '../../utils/http-test-server';
import { startSmtpTestServer, type SmtpTestServer } from '../../utils/smtp-test-server';
import { createTestApp, type TestApp } from '../../utils/test-app';
import { createSteps, execute } from '../../utils/workflow-api';
import { until } from '../../utils/until';

/** A repository method as the crash injection wraps it. */
type Write = (...args: unknown[]) => Promise<unknown>;

const realAttempt = DatabaseRunJournal.prototype.attempt;

const STORE = { name: 'store', type: 'save' };
const MAIL = {
  name: 'mail',
  type: 'notify',
  config: { email: { to: 'buyer@example.com', subject: '{{input.name}}' } },
};
const SHAPE = { name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } };

/** The process "dies" here: nothing after it in this drive (or this delivery) happens. */
class Crash extends Error {}

/**
 * Crash injection on the real repositories (PGlite, or PostgreSQL with TEST_DATABASE_URL): every
 * write a run and its delivery make is counted; at write `crashAt` the drive dies right after the
 * write committed (the outbox's mark-sent: right before it, after SMTP accepted). The run then
 * resumes as after a real crash (its lease expires, any instance claims it; the outbox poll takes
 * over the effect), and the test checks that no effect was repeated or lost.
 */
describe('run journal and outbox: a crash between any two writes repeats and loses nothing', () => {
  let t: TestApp;
  let smtp: SmtpTestServer;
  let receiver: HttpTestServer;
  let admin: string;
  let user: TestUser;
  let crashAt: number | null = null;
  let written: string[] = [];
  let failUnavailable = 0;

  beforeAll(async () => {
    smtp = await startSmtpTestServer();
    receiver = await startHttpServer();
    t = await createTestApp({
      env: {
        SMTP_URL: smtp.url,
        MAIL_FROM: 'forms@example.com',
        WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}`,
        WORKFLOW_LEASE_MS: '1000',
        WORKFLOW_POLL_MS: '100',
        WORKFLOW_MAX_CLAIMS: '2',
        OUTBOX_POLL_MS: '100',
        // Longer than a send takes on a loaded machine: a claim whose lease runs out while its mail
        // is being sent is claimed again by the poll, and the mail goes twice (same Message-ID).
        OUTBOX_LEASE_MS: '5000',
      },
    });
    const journal = t.app.get<RunJournalRepository, Record<string, Write>>(RunJournalRepository);
    const queue = t.app.get<RunQueueRepository, Record<string, Write>>(RunQueueRepository);
    for (const name of ['insertRunning', 'checkpoint', 'requeue', 'finish', 'insertFinished']) {
      const runs = name === 'requeue' ? queue : journal;
      const real = runs[name].bind(runs);
      runs[name] = async (...args: unknown[]) => {
        if (failUnavailable > 0) {
          failUnavailable -= 1;
          throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
        }
        const answer = await real(...args);
        written.push(name);
        if (written.length === crashAt) {
          crashAt = null;
          throw new Crash(`crashed after ${name}`);
        }
        return answer;
      };
    }
    // The run's first write rides on the save step's record insert (database/carried-write): it
    // counts as a write when the run is stored after that attempt and was not before. Read from
    // the journal's own state, not the database: a query here would delay the steps after the save,
    // and the call's mark ahead of time holds only MARKED_AHEAD_FOR_MS.
    const attempt = realAttempt;
    const stored = (journal: DatabaseRunJournal) =>
      (journal as unknown as { unwritten: unknown }).unwritten === null;
    DatabaseRunJournal.prototype.attempt = async function carried<T extends AttemptOutcome>(
      this: DatabaseRunJournal,
      work: (carried: CarriedWrite | null) => Promise<T>,
    ): Promise<T> {
      const before = stored(this);
      const outcome = await attempt.call(this, work);
      if (!before && stored(this)) {
        written.push('insertRunning with the record');
        if (written.length === crashAt) {
          crashAt = null;
          throw new Crash('crashed after the record insert carrying the run');
        }
      }
      return outcome as T;
    };
    const effects = t.app.get<WorkflowEffectsRepository, Record<string, Write>>(WorkflowEffectsRepository);
    const claimDue = effects.claimDue.bind(effects);
    effects.claimDue = async (...args: unknown[]) => {
      const claimed = (await claimDue(...args)) as unknown[];
      if (claimed.length === 0) return claimed;
      written.push('claimDue');
      if (written.length === crashAt) {
        crashAt = null;
        throw new Crash('crashed after claiming');
      }
      return claimed;
    };
    const markSent = effects.markSent.bind(effects);
    effects.markSent = async (...args: unknown[]) => {
      if (written.length + 1 === crashAt) {
        written.push('markSent (lost)');
        crashAt = null;
        throw new Crash('crashed after SMTP accepted, before marking sent');
      }
      written.push('markSent');
      return markSent(...args);
    };
    admin = await adminToken(t);
    user = await createUser(t);
  });
  afterAll(async () => {
    DatabaseRunJournal.prototype.attempt = realAttempt;
    await t.close();
    await smtp.close();
    await receiver.close();
  });

  const runOf = async (runId: string) =>
    (await t.request({ method: 'GET', url: `/api/workflow/runs/${runId}`, token: admin })).json();

  /** Shapes of workflow the crash cases run (built when run: the receiver's port is known by then). */
  const SHAPES = {
    mailFirst: () => [STORE, MAIL, tell(), SHAPE],
    // The benchmark's shape (no mail): only a pure step between the save and the call, so the
    // save's insert marks the call in flight already and the call needs no write of its own.
    callAfterPure: () => [STORE, SHAPE, tell()],
  };
  const tell = () => ({
    name: 'tell',
    type: 'api',
    onError: 'continue',
    config: { url: receiver.url('/hook'), method: 'POST', payload: { name: '{{input.name}}' } },
  });

  async function workflow(
    shape: keyof typeof SHAPES = 'mailFirst',
  ): Promise<{ workflowId: string; configId: string }> {
    const configId = await createConfig(t, admin, { preferences: { saveLimit: null } });
    const workflowId = await createSteps(t, admin, SHAPES[shape]());
    return { workflowId, configId };
  }

  /** Runs the workflow once (crashing at write `at`), waits until it and its mail (if any) are done. */
  async function runThrough(at: number | null, name: string, shape: keyof typeof SHAPES = 'mailFirst') {
    const { workflowId, configId } = await workflow(shape);
    written = [];
    crashAt = at;
    const response = await execute(t, user.token, workflowId, configId, { name, qty: 1 });
    const history = await until(
      async () =>
        (await t.request({ method: 'GET', url: `/api/workflow/${workflowId}/runs`, token: admin })).json(),
      (page) => page.data?.[0]?.status !== undefined && !['running', 'queued'].includes(page.data[0].status),
      'the run to finish',
    );
    const runId = history.data[0].id as string;
    const run = await until(
      () => runOf(runId),
      (r) => shape === 'callAfterPure' || r.effects[0]?.state === 'sent',
      'its mail to be sent',
    );
    return { response, run, runId, configId, writes: [...written] };
  }

  it('without a crash: the writes a run makes, in order (what the crash cases cut between)', async () => {
    const { run, writes, response } = await runThrough(null, 'nocrash');
    expect(response.statusCode).toBe(200);
    expect(run.status).toBe('success');
    // Written with the first step with an effect (in the save's record insert), with the
    // non-replayable api step marked in flight, at the end (the mail into the outbox in the same
    // statement); then the delivery.
    expect(writes).toEqual(['insertRunning with the record', 'checkpoint', 'finish', 'claimDue', 'markSent']);
  });

  it.each([1, 2, 3, 4, 5])(
    'a crash after write %i: one record, one call, one mail (one Message-ID)',
    async (at) => {
      const name = `crash${at}-${randomUUID().slice(0, 8)}`;
      const { run, runId, configId } = await runThrough(at, name);
      expect(run.status).toBe('success');
      expect(run.effects).toEqual([
        { step: 'mail', kind: 'mail', state: 'sent', attempts: expect.any(Number), lastError: null },
      ]);
      // The api step was called at most once; when the crash came with it in flight it is reported
      // interrupted (it may have had its effect) instead of being called again.
      const calls = receiver.requests.filter((request) => JSON.parse(request.body).name === name);
      expect(calls.length).toBeLessThanOrEqual(1);
      const tell = run.steps.find((step: { name: string }) => step.name === 'tell');
      expect(tell.status).toBe(calls.length === 1 ? 'success' : 'interrupted');
      const mails = smtp.messages.filter((message) => message.subject === name);
      expect(mails.length).toBeGreaterThanOrEqual(1);
      // A resend after a crash between SMTP accepting and the mark is recognisable: the same Message-ID.
      expect(new Set(mails.map((mail) => mail.headers['message-id']))).toEqual(
        new Set([`<run.${runId}.1.0@example.com>`]),
      );
      if (at !== 5) expect(mails).toHaveLength(1);
      const records = await t.request({ method: 'GET', url: `/api/data/${configId}`, token: admin });
      expect(records.json().total).toBe(1);
      expect(records.json().data[0]._id).toBe(run.dataId);
    },
    30_000,
  );

  it('a call after only pure steps is marked in flight by the save’s insert: no write of its own', async () => {
    const { run, writes } = await runThrough(null, 'nocrash-callafterpure', 'callAfterPure');
    expect(run.status).toBe('success');
    expect(writes).toEqual(['insertRunning with the record', 'finish']);
  });

  it.each([1, 2])(
    'that shape, a crash after write %i: one record, and the call made once or reported interrupted',
    async (at) => {
      const name = `callafterpure${at}-${randomUUID().slice(0, 8)}`;
      const { run, configId } = await runThrough(at, name, 'callAfterPure');
      expect(run.status).toBe('success');
      const calls = receiver.requests.filter((request) => JSON.parse(request.body).name === name);
      // After the first write the process died before the call: the resumed run cannot know that,
      // so it reports the call interrupted instead of making it.
      expect(calls).toHaveLength(at === 1 ? 0 : 1);
      const tellLog = run.steps.find((step: { name: string }) => step.name === 'tell');
      expect(tellLog.status).toBe(at === 1 ? 'interrupted' : 'success');
      const records = await t.request({ method: 'GET', url: `/api/data/${configId}`, token: admin });
      expect(records.json().total).toBe(1);
      expect(records.json().data[0]._id).toBe(run.dataId);
    },
    30_000,
  );

  it('a run’s writes outlast a database that drops connections: retried, the run succeeds', async () => {
    const { workflowId, configId } = await workflow();
    failUnavailable = 2;
    const response = await execute(t, user.token, workflowId, configId, { name: 'flaky', qty: 1 });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ success: true, status: 'success' });
    expect(failUnavailable).toBe(0);
  });

  it('a run that fails to run each time is given up after WORKFLOW_MAX_CLAIMS claims, with a stable cause', async () => {
    const { workflowId, configId } = await workflow();
    const runs = t.app.get(RunQueueRepository);
    const id = randomUUID();
    // A damaged checkpoint: every drive of the run throws before it does anything.
    await runs.enqueueWithinBound(
      {
        id,
        workflowId,
        userId: user.user.id,
        siteId: null,
        configId,
        request: {
          configId,
          data: {},
          actor: { userId: user.user.id, email: 'x', role: 'user' },
          mode: 'async',
        },
        startedAt: new Date(),
        definition: { steps: [] },
        definitionVersion: 1,
        rerunOf: null,
      },
      { checkpoint: { damaged: true }, nextStep: 0, steps: [], dataId: null },
      100,
    );
    const run = await until(
      () => runOf(id),
      (r) => r.status === 'failed',
      'the run to be given up',
    );
    expect(run.message).toBe(
      'Workflow failed: The run failed to run 2 times in a row and was given up. Last cause: WORKFLOW_STATE_INVALID: The stored state of the run cannot be read (checkpoint).',
    );
  }, 30_000);
});
