import { useAppSuite } from '../../utils/app-suite';
import { activeRecords, createSteps, getRun, run } from '../../utils/workflow-api';

const ORDER = { name: 'Ann', qty: 2, price: 3 };
const ADMIN_NOTIFY = 'ops@example.com';

describe('workflow run outcomes: conditions, onError, rollback, held mail and failure notices', () => {
  const s = useAppSuite({
    smtp: { rejectRecipients: ['bounce@example.com'] },
    env: {
      ADMIN_NOTIFY_EMAIL: ADMIN_NOTIFY,
      // A run's mail is sent by the run itself, right after its final commit, before it answers:
      // that is what these tests read. The outbox poll (which sends what a run left behind) could
      // claim the mail first and send it after the answer, so it is kept out of their way.
      OUTBOX_POLL_MS: '600000',
    },
    users: 1,
    forms: [
      {},
      // A form the order never satisfies: validating against it is a dependable step failure.
      {
        title: 'Strict',
        schema: { type: 'object', required: ['zip'], properties: { zip: { type: 'string' } } },
        validationRules: [],
        computedRules: [],
      },
    ],
  });

  const save = { name: 'store', type: 'save', config: {} };
  const shape = { name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } };
  const failing = (extra: Record<string, unknown> = {}) => ({
    name: 'strict',
    type: 'validate',
    config: { configId: s.configIds[1] },
    ...extra,
  });
  const notify = {
    name: 'mail',
    type: 'notify',
    config: { email: { to: 'buyer@example.com', subject: 'Order from {{input.name}} on {{formTitle}}' } },
  };
  const runOf = (runId: string) => getRun(s.t, s.user.token, runId);

  it('a step whose condition is not met is skipped and the next step runs', async () => {
    const id = await createSteps(s.t, s.admin, [
      { ...shape, name: 'vipOnly', condition: 'input.vip' },
      { ...shape, name: 'notVip', condition: '!input.vip' },
      { ...shape, name: 'kindIsB2b', condition: 'input.kind.equals.b2b' },
      { ...shape, name: 'kindNotB2b', condition: 'input.kind.notEquals.b2b' },
      { ...shape, name: 'logicBig', condition: { '>': [{ var: 'input.qty' }, 10] } },
      { ...shape, name: 'savedYet', condition: 'savedData.exists' },
      save,
      { ...shape, name: 'afterSave', condition: 'savedData.exists' },
    ]);
    const body = await run(s.t, s.user.token, id, s.configId, { ...ORDER, vip: false, kind: 'retail' });
    expect(body.success).toBe(true);
    expect(body.status).toBe('success');
    expect(body.steps.map((s: any) => [s.name, s.status])).toEqual([
      ['vipOnly', 'skipped'],
      ['notVip', 'success'],
      ['kindIsB2b', 'skipped'],
      ['kindNotB2b', 'success'],
      ['logicBig', 'skipped'],
      ['savedYet', 'skipped'],
      ['store', 'success'],
      ['afterSave', 'success'],
    ]);
    expect(body.steps[0]).toMatchObject({ result: null, attempts: 0 });
    expect(Object.keys(body.results).sort()).toEqual(['afterSave', 'kindNotB2b', 'notVip', 'store']);
  });

  it('onError stop: the remaining steps do not run, success false, run status failed; held mail still goes out', async () => {
    const id = await createSteps(s.t, s.admin, [notify, failing({ onError: 'stop' }), save]);
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    expect(body).toMatchObject({
      success: false,
      status: 'failed',
      message: expect.stringContaining('step "strict" failed'),
      data: null,
      steps: [
        { name: 'mail', status: 'success' },
        { name: 'strict', status: 'failed', error: { code: 'DATA_VALIDATION_FAILED' } },
      ],
    });
    expect(body.steps).toHaveLength(2);
    expect(body.results.store).toBeUndefined();
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(0);
    expect(await runOf(body.runId)).toMatchObject({ status: 'failed', dataId: null });
    // Only a rollback drops held mail; a stopped run sends what it queued.
    expect(s.smtp.messages).toHaveLength(1);
  });

  it('onError continue: the error is logged, the next step runs and the run ends in success', async () => {
    const id = await createSteps(s.t, s.admin, [failing({ onError: 'continue' }), save]);
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    expect(body).toMatchObject({
      success: true,
      status: 'success',
      message: 'Workflow completed; step "strict" failed and was continued past',
      steps: [
        { name: 'strict', status: 'failed', error: { code: 'DATA_VALIDATION_FAILED' } },
        { name: 'store', status: 'success' },
      ],
      data: { data: ORDER },
    });
    // A failed validate keeps its verdict under its name (README: {valid, validationErrors, computedResults}).
    expect(Object.keys(body.results)).toEqual(['strict', 'store']);
    expect(body.results.strict).toMatchObject({
      valid: false,
      validationErrors: [expect.objectContaining({ field: 'zip' })],
      computedResults: {},
    });
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(1);
    expect(await runOf(body.runId)).toMatchObject({ status: 'success', dataId: body.results.store.dataId });
  });

  it('onError rollback after a save: the record is deactivated, earlier mail is dropped, the run ends rolled_back', async () => {
    const id = await createSteps(s.t, s.admin, [notify, save, failing({ onError: 'rollback' }), shape]);
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    const dataId = body.results.store.dataId;
    expect(body).toMatchObject({
      success: false,
      status: 'rolled_back',
      message: expect.stringMatching(/^Workflow rolled back: step "strict" failed/),
      steps: [
        { name: 'mail', type: 'notify', status: 'compensated', compensation: { effectsDropped: 1 } },
        {
          name: 'store',
          type: 'save',
          status: 'compensated',
          compensation: { dataId, isActive: false },
        },
        { name: 'strict', status: 'failed', error: { code: 'DATA_VALIDATION_FAILED' } },
      ],
    });
    expect(body.steps).toHaveLength(3);

    const record = await s.t.request({
      method: 'GET',
      url: `/api/data/${s.configId}/${dataId}`,
      token: s.user.token,
    });
    expect(record.statusCode).toBe(404);
    expect(record.json().code).toBe('RECORD_NOT_FOUND');
    expect(await activeRecords(s.t, s.admin, s.configId)).toMatchObject({ total: 0, data: [] });
    expect(await runOf(body.runId)).toMatchObject({
      status: 'rolled_back',
      // The way to the deactivated record is kept, and the run says it was compensated.
      dataId,
      dataCompensated: true,
      steps: [{ status: 'compensated' }, { status: 'compensated' }, { status: 'failed' }],
      effects: [],
    });
    expect(s.smtp.messages).toHaveLength(0);
    // The deactivated record no longer counts against a save limit of the user.
    const stats = await s.t.request({ method: 'GET', url: `/api/data/${s.configId}/stats`, token: s.admin });
    expect(stats.json().total).toBe(0);
  });

  it('a successful run with a notify step sends exactly one e-mail when the run ends', async () => {
    const id = await createSteps(s.t, s.admin, [save, notify]);
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    expect(body.success).toBe(true);
    expect(body.results.mail).toEqual({
      to: 'buyer@example.com',
      subject: 'Order from Ann on Order form',
      queued: true,
    });
    expect(s.smtp.messages).toHaveLength(1);
    const [mail] = s.smtp.messages;
    expect(mail.envelope).toEqual({ from: 'forms@example.com', to: ['buyer@example.com'] });
    expect(mail.subject).toBe('Order from Ann on Order form');
    // The fields of the saved record (jsonb keeps its own key order).
    expect(mail.text!.trimEnd().split('\n').sort()).toEqual(['name: Ann', 'price: 3', 'qty: 2']);
    expect(mail.html).toContain('<tr><th align="left" valign="top">name</th><td>Ann</td></tr>');
  });

  it('errorHandling.strategy is used by steps without onError; a step’s own onError wins', async () => {
    const continuing = await createSteps(s.t, s.admin, [failing(), save], {
      config: { errorHandling: { strategy: 'continue' } },
    });
    const continued = await run(s.t, s.user.token, continuing, s.configId, ORDER);
    expect(continued).toMatchObject({
      success: true,
      steps: [
        { name: 'strict', status: 'failed' },
        { name: 'store', status: 'success' },
      ],
    });

    const overridden = await createSteps(s.t, s.admin, [failing({ onError: 'stop' }), save], {
      config: { errorHandling: { strategy: 'continue' } },
    });
    const stopped = await run(s.t, s.user.token, overridden, s.configId, ORDER);
    expect(stopped).toMatchObject({ success: false, status: 'failed', steps: [{ name: 'strict' }] });
    expect(stopped.steps).toHaveLength(1);

    // Without either, a failure stops the run.
    const defaulted = await createSteps(s.t, s.admin, [failing(), save]);
    const byDefault = await run(s.t, s.user.token, defaulted, s.configId, ORDER);
    expect(byDefault).toMatchObject({ success: false, status: 'failed' });
    expect(byDefault.steps).toHaveLength(1);
    expect((await activeRecords(s.t, s.admin, s.configId)).total).toBe(1);
  });

  it('errorHandling.notify e-mails ADMIN_NOTIFY_EMAIL naming the workflow, the failed step and the run; a success sends nothing', async () => {
    const id = await createSteps(s.t, s.admin, [shape, failing()], {
      name: 'Nightly sync',
      config: { errorHandling: { notify: true } },
    });
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    expect(body.success).toBe(false);
    expect(s.smtp.messages).toHaveLength(1);
    const [notice] = s.smtp.messages;
    expect(notice.envelope.to).toEqual([ADMIN_NOTIFY]);
    expect(notice.subject).toBe('Workflow "Nightly sync" failed');
    expect(notice.text).toContain(`Nightly sync (${id})`);
    expect(notice.text).toContain('strict');
    expect(notice.text).toContain(body.runId);
    expect(notice.text).toContain('DATA_VALIDATION_FAILED');
    expect(notice.html).toContain(body.runId);

    const fine = await createSteps(s.t, s.admin, [shape], {
      name: 'Fine',
      config: { errorHandling: { notify: true } },
    });
    expect((await run(s.t, s.user.token, fine, s.configId, ORDER)).success).toBe(true);
    expect(s.smtp.messages).toHaveLength(1);
  });

  it('a message the mail server refuses is failed in the run record’s effects (MAIL_DELIVERY_FAILED); the run’s steps stand', async () => {
    const id = await createSteps(s.t, s.admin, [
      save,
      { ...notify, config: { email: { to: 'bounce@example.com', subject: 'Order' } } },
    ]);
    const body = await run(s.t, s.user.token, id, s.configId, ORDER);
    // The run committed to the mail (its final write put it into the outbox); delivery comes after.
    expect(body).toMatchObject({
      success: true,
      status: 'success',
      steps: [
        { name: 'store', status: 'success' },
        { name: 'mail', status: 'success' },
      ],
    });
    expect(s.smtp.messages).toHaveLength(0);
    expect(await runOf(body.runId)).toMatchObject({
      status: 'success',
      effects: [
        {
          step: 'mail',
          kind: 'mail',
          state: 'failed',
          attempts: 1,
          lastError: { code: 'MAIL_DELIVERY_FAILED', message: 'The mail server refused the message (550)' },
        },
      ],
    });
  });

  it('notify to as a single token yielding an array mails every address; a bad address in it is refused', async () => {
    const toList = { ...notify, config: { email: { to: '{{input.emails}}', subject: 'Order' } } };
    const id = await createSteps(s.t, s.admin, [toList]);
    const body = await run(s.t, s.user.token, id, s.configId, {
      ...ORDER,
      emails: ['a@example.com', 'b@example.com'],
    });
    expect(body).toMatchObject({
      success: true,
      steps: [{ name: 'mail', status: 'success', result: { to: 'a@example.com, b@example.com' } }],
    });
    expect(s.smtp.messages).toHaveLength(1);
    expect(s.smtp.messages[0].envelope.to).toEqual(['a@example.com', 'b@example.com']);

    const bad = await run(s.t, s.user.token, id, s.configId, { ...ORDER, emails: ['a@example.com', 'nope'] });
    expect(bad).toMatchObject({
      success: false,
      steps: [{ name: 'mail', status: 'failed', error: { code: 'INVALID_STEP_CONFIG' } }],
    });
    expect(s.smtp.messages).toHaveLength(1);
  });
});
