import { randomBytes } from 'node:crypto';
import { useAppSuite } from '../../utils/app-suite';
import { useProcessEnv } from '../../utils/process-env';
import { createSteps, execute, getRun, run } from '../../utils/workflow-api';

describe('workflow templates and secrets: typed values, text, missing paths, env values redacted', () => {
  const secret = `tok-${randomBytes(12).toString('hex')}`;
  useProcessEnv({ API_TOKEN: secret });
  const s = useAppSuite({
    partner: true,
    env: ({ partner }) => ({
      WORKFLOW_ENV_ALLOWLIST: 'API_TOKEN',
      WORKFLOW_ENV_ORIGINS: `API_TOKEN=${partner.url('')}`,
    }),
    users: 1,
    forms: 1,
  });

  const post = (name: string, payload: unknown, extra: Record<string, unknown> = {}) => ({
    name,
    type: 'api',
    config: { url: s.partner.url(`/${name}`), method: 'POST', payload, ...extra },
  });
  const received = (index = 0) => JSON.parse(s.partner.requests[index].body);

  it('a value that is exactly one token keeps its type; a missing one is null', async () => {
    const id = await createSteps(s.t, s.admin, [
      post('typed', {
        qty: '{{input.qty}}',
        price: '{{ input.price }}',
        paid: '{{input.paid}}',
        lines: '{{input.lines}}',
        meta: '{{input.meta}}',
        missing: '{{input.nope}}',
        deep: '{{input.meta.none.deeper}}',
        list: ['{{input.qty}}', 'fixed'],
      }),
    ]);
    const data = {
      name: 'Ann',
      qty: 2,
      price: 3.5,
      paid: false,
      lines: [{ sku: 'A', n: 1 }],
      meta: { source: 'web' },
    };
    const body = await run(s.t, s.user.token, id, s.configId, data);
    expect(body.success).toBe(true);
    expect(s.partner.requests).toHaveLength(1);
    expect(s.partner.requests[0].headers['content-type']).toBe('application/json');
    expect(received()).toEqual({
      qty: 2,
      price: 3.5,
      paid: false,
      lines: [{ sku: 'A', n: 1 }],
      meta: { source: 'web' },
      missing: null,
      deep: null,
      list: [2, 'fixed'],
    });
  });

  it('inside a longer text values are written as text, objects as JSON, missing as empty', async () => {
    const id = await createSteps(
      s.t,
      s.admin,
      [
        { name: 'store', type: 'save', config: {} },
        post('text', {
          line: '{{input.qty}} x {{input.name}} for {{user.email}}',
          where: 'Form "{{formTitle}}" in workflow {{workflowName}}',
          record: 'saved {{savedData._id}} in {{savedData.data.city}}',
          computed: 'total={{computedResults.total}} big={{computedResults.bigOrder}}',
          json: 'meta={{input.meta}}',
          missing: '[{{input.nope}}]',
          previous: 'id={{results.store.dataId}}',
        }),
      ],
      { name: 'Texts' },
    );
    const data = { name: 'Ann', qty: 2, price: 3, city: 'Pécs', meta: { a: 1 } };
    const body = await run(s.t, s.user.token, id, s.configId, data);
    expect(body.success).toBe(true);
    const dataId = body.results.store.dataId;
    expect(received()).toEqual({
      line: `2 x Ann for ${s.user.user.email}`,
      where: 'Form "Order form" in workflow Texts',
      record: `saved ${dataId} in Pécs`,
      computed: 'total=6 big=false',
      json: 'meta={"a":1}',
      missing: '[]',
      previous: `id=${dataId}`,
    });
  });

  it('templates render in the url and headers; a text payload is sent as it renders', async () => {
    const id = await createSteps(s.t, s.admin, [
      {
        name: 'put',
        type: 'api',
        config: {
          url: `${s.partner.url('/orders')}/{{input.name}}?qty={{input.qty}}`,
          method: 'PUT',
          headers: { 'X-Order': '{{input.name}}-{{input.qty}}' },
          payload: 'qty={{input.qty}}',
        },
      },
    ]);
    expect((await run(s.t, s.user.token, id, s.configId, { name: 'Ann', qty: 2 })).success).toBe(true);
    expect(s.partner.requests[0]).toMatchObject({
      method: 'PUT',
      url: '/orders/Ann?qty=2',
      body: 'qty=2',
      headers: { 'x-order': 'Ann-2', 'content-type': 'text/plain; charset=utf-8' },
    });
  });

  it('{{env.API_TOKEN}} reaches the server but is redacted from the response, the run record and the record log', async () => {
    // The server echoes the header it got, so the secret comes back in the step's result too.
    s.partner.handle((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ seen: req.headers.authorization }));
    });
    const id = await createSteps(s.t, s.admin, [
      { name: 'store', type: 'save', config: {} },
      {
        name: 'call',
        type: 'api',
        config: {
          url: s.partner.url('/secure'),
          method: 'POST',
          headers: { Authorization: 'Bearer {{env.API_TOKEN}}' },
          payload: { id: '{{savedData._id}}' },
        },
      },
    ]);
    const response = await execute(s.t, s.user.token, id, s.configId, { name: 'Ann', qty: 2 });
    expect(response.statusCode).toBe(200);
    expect(s.partner.requests).toHaveLength(1);
    expect(s.partner.requests[0].headers.authorization).toBe(`Bearer ${secret}`);

    expect(response.body).not.toContain(secret);
    const body = response.json();
    expect(body.success).toBe(true);
    expect(body.results.call).toEqual({ status: 200, data: { seen: 'Bearer [redacted]' } });

    const runRecord = await getRun(s.t, s.admin, body.runId);
    expect(JSON.stringify(runRecord)).not.toContain(secret);
    expect(runRecord.steps[1].result).toEqual({ status: 200, data: { seen: 'Bearer [redacted]' } });

    const history = await s.t.request({
      method: 'GET',
      url: `/api/workflow/${id}/runs`,
      token: s.user.token,
    });
    expect(history.body).not.toContain(secret);
    const record = await s.t.request({
      method: 'GET',
      url: `/api/data/${s.configId}/${body.results.store.dataId}`,
      token: s.admin,
    });
    expect(record.statusCode).toBe(200);
    expect(record.json().workflow).toHaveLength(1);
    expect(JSON.stringify(record.json())).not.toContain(secret);
    // The definition keeps the placeholder, never the value.
    const definition = await s.t.request({ method: 'GET', url: `/api/workflow/${id}`, token: s.admin });
    expect(definition.body).toContain('{{env.API_TOKEN}}');
    expect(definition.body).not.toContain(secret);
  });

  it('a failed call with the secret in its error answer is redacted as well', async () => {
    s.partner.handle((req, res) => {
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end(`rejected ${req.headers.authorization}`);
    });
    const id = await createSteps(s.t, s.admin, [
      {
        name: 'call',
        type: 'api',
        config: { url: s.partner.url('/secure'), headers: { Authorization: 'Bearer {{env.API_TOKEN}}' } },
      },
    ]);
    const response = await execute(s.t, s.user.token, id, s.configId, { name: 'Ann', qty: 2 });
    expect(response.statusCode).toBe(200);
    expect(response.body).not.toContain(secret);
    const body = response.json();
    expect(body.steps[0]).toMatchObject({
      status: 'failed',
      error: { code: 'HTTP_STATUS', details: { status: 401, data: 'rejected Bearer [redacted]' } },
    });
    expect(JSON.stringify(await getRun(s.t, s.user.token, body.runId))).not.toContain(secret);
  });
});
