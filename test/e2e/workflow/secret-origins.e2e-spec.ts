import { randomBytes } from 'node:crypto';
import { createRole } from '../../factories/role.factory';
import { createSite } from '../../factories/site.factory';
import { createUser } from '../../factories/user.factory';
import { WorkflowsRepository } from '../../../src/workflow/definitions/workflows.repository';
import { startHttpServer, type HttpTestServer } from '../../utils/http-test-server';
import { useAppSuite } from '../../utils/app-suite';
import { useProcessEnv } from '../../utils/process-env';
import { createSteps, failedRun, postWorkflow, run, workflowBody } from '../../utils/workflow-api';

/**
 * Each allow-listed env value goes only to the origins WORKFLOW_ENV_ORIGINS binds it to. The CRM
 * (`s.partner`) and `elsewhere` are two real servers on 127.0.0.1, both allowed past the SSRF
 * guard, so only the binding stands between CRM_TOKEN and `elsewhere`. OTHER_TOKEN is allow-listed with no origin
 * (it may be sent nowhere); BASE is bound to `*` (a base URL, no secret).
 */
describe('workflow secrets are bound to the origins they may be sent to', () => {
  let elsewhere: HttpTestServer;
  const secret = `crm-${randomBytes(12).toString('hex')}`;
  const other = `other-${randomBytes(12).toString('hex')}`;
  useProcessEnv({ CRM_TOKEN: secret, OTHER_TOKEN: other, BASE: undefined });
  beforeAll(async () => {
    elsewhere = await startHttpServer();
  });
  afterAll(() => elsewhere.close());
  const s = useAppSuite({
    partner: true,
    env: ({ partner }) => ({
      WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${partner.port},127.0.0.1:${elsewhere.port}`,
      WORKFLOW_ENV_ALLOWLIST: 'CRM_TOKEN,OTHER_TOKEN,BASE',
      WORKFLOW_ENV_ORIGINS: `CRM_TOKEN=${partner.url('')} https://crm.example.com, BASE=*`,
    }),
    users: 1,
    forms: 1,
  });
  beforeEach(() => {
    elsewhere.reset();
    // A test may re-point it.
    process.env.BASE = s.partner.url('');
  });

  const call = (url: string, extra: Record<string, unknown> = {}) => ({
    name: 'call',
    type: 'api',
    config: { url, method: 'POST', headers: { Authorization: 'Bearer {{env.CRM_TOKEN}}' }, ...extra },
  });

  /** A definition stored as it was before the binding existed (the save-time check never saw it). */
  async function storedUnchecked(steps: unknown[]): Promise<string> {
    const row = await s.t.app.get(WorkflowsRepository).insert(
      {
        name: 'Saved earlier',
        alias: null,
        description: null,
        type: 'custom',
        config: { steps, retry: { enabled: true, maxAttempts: 3, backoff: 'fixed', delayMs: 0 } },
        permissions: { roles: ['user'], users: [] },
        tags: [],
        siteId: null,
        isActive: true,
      },
      null,
    );
    return row.id;
  }

  describe('at run time', () => {
    it('the bound origin gets the secret', async () => {
      const id = await createSteps(s.t, s.admin, [
        call(s.partner.url('/orders'), { payload: { key: '{{env.CRM_TOKEN}}' } }),
      ]);
      const body = await run(s.t, s.user.token, id, s.configId, {});
      expect(body).toMatchObject({ success: true, steps: [{ name: 'call', status: 'success' }] });
      expect(s.partner.requests).toHaveLength(1);
      expect(s.partner.requests[0].headers.authorization).toBe(`Bearer ${secret}`);
      expect(JSON.parse(s.partner.requests[0].body)).toEqual({ key: secret });
    });

    it.each([
      ['a header', call('{{url}}')],
      [
        'the body',
        {
          ...call('{{url}}'),
          config: { url: '{{url}}', method: 'POST', payload: { k: '{{env.CRM_TOKEN}}' } },
        },
      ],
      ['the query', { ...call('{{url}}'), config: { url: '{{url}}?k={{env.CRM_TOKEN}}' } }],
    ])(
      'the secret in %s on its way to an origin it is not bound to fails the step (SECRET_ORIGIN_REFUSED, not retried): the server gets nothing',
      async (_, step) => {
        const id = await storedUnchecked([
          JSON.parse(JSON.stringify(step).replace('{{url}}', elsewhere.url('/collect'))),
        ]);
        const body = await run(s.t, s.user.token, id, s.configId, {});
        expect(body).toMatchObject(
          failedRun({
            name: 'call',
            status: 'failed',
            attempts: 1,
            error: {
              code: 'SECRET_ORIGIN_REFUSED',
              details: {
                env: 'CRM_TOKEN',
                origin: elsewhere.url(''),
                // BASE's value is the CRM's origin: redacted like every allow-listed value.
                allowedOrigins: ['[redacted]', 'https://crm.example.com'],
              },
            },
          }),
        );
        expect(elsewhere.connections).toBe(0);
        expect(JSON.stringify(body)).not.toContain(secret);
      },
    );

    it('a compensating request carrying the secret elsewhere is refused too: the rollback sends nothing there', async () => {
      s.partner.handle((req, res) => {
        res.writeHead(req.url === '/fail' ? 400 : 200, { 'content-type': 'application/json' });
        res.end('{}');
      });
      const id = await storedUnchecked([
        {
          ...call(s.partner.url('/orders')),
          config: {
            url: s.partner.url('/orders'),
            compensate: {
              method: 'DELETE',
              url: elsewhere.url('/undo'),
              headers: { Authorization: 'Bearer {{env.CRM_TOKEN}}' },
            },
          },
        },
        { name: 'next', type: 'api', onError: 'rollback', config: { url: s.partner.url('/fail') } },
      ]);
      const body = await run(s.t, s.user.token, id, s.configId, {});
      expect(body).toMatchObject({
        status: 'rolled_back',
        steps: [
          {
            name: 'call',
            status: 'not_compensable',
            compensation: { error: { code: 'SECRET_ORIGIN_REFUSED' } },
          },
          { name: 'next', status: 'failed', error: { code: 'HTTP_STATUS' } },
        ],
      });
      expect(elsewhere.connections).toBe(0);
    });

    it('a base URL re-pointed after the save: the secret does not follow it', async () => {
      const id = await createSteps(s.t, s.admin, [call('{{env.BASE}}/orders')]);
      process.env.BASE = elsewhere.url('');
      const body = await run(s.t, s.user.token, id, s.configId, {});
      expect(body.steps[0]).toMatchObject({ status: 'failed', error: { code: 'SECRET_ORIGIN_REFUSED' } });
      expect(elsewhere.connections).toBe(0);
      expect(s.partner.connections).toBe(0);
    });

    it('a name bound to no origin is sent nowhere, not even to an origin bound to another secret', async () => {
      const id = await storedUnchecked([
        {
          name: 'call',
          type: 'api',
          config: { url: s.partner.url('/x'), headers: { 'X-Key': '{{env.OTHER_TOKEN}}' } },
        },
      ]);
      const body = await run(s.t, s.user.token, id, s.configId, {});
      expect(body.steps[0]).toMatchObject({
        status: 'failed',
        error: { code: 'SECRET_ORIGIN_REFUSED', details: { env: 'OTHER_TOKEN', allowedOrigins: [] } },
      });
      expect(s.partner.connections).toBe(0);
    });
  });

  describe('at save', () => {
    it.each([
      ['in a header', call('{{url}}'), 'config.steps[0].config.url'],
      [
        'in the payload',
        { name: 'call', type: 'api', config: { url: '{{url}}', payload: { k: '{{env.CRM_TOKEN}}' } } },
        'config.steps[0].config.url',
      ],
      [
        'in a compensating request',
        {
          name: 'call',
          type: 'api',
          config: {
            url: 'https://crm.example.com/orders',
            headers: { Authorization: 'Bearer {{env.CRM_TOKEN}}' },
            compensate: {
              method: 'DELETE',
              url: '{{url}}',
              headers: { Authorization: 'Bearer {{env.CRM_TOKEN}}' },
            },
          },
        },
        'config.steps[0].config.compensate.url',
      ],
    ])(
      'a secret %s going to an origin it is not bound to is a 422 naming the step, on POST and on PUT',
      async (_, step, field) => {
        const steps = [JSON.parse(JSON.stringify(step).replace('{{url}}', elsewhere.url('/collect')))];
        const created = await postWorkflow(s.t, s.admin, workflowBody({ config: { steps } }));
        expect(created.statusCode).toBe(422);
        expect(created.json()).toMatchObject({ code: 'VALIDATION_FAILED', statusCode: 422 });
        expect(created.json().validationErrors).toEqual([
          { field, rule: 'secretOrigin', message: expect.stringContaining('{{env.CRM_TOKEN}}') },
        ]);
        const id = await createSteps(s.t, s.admin, [call(s.partner.url('/orders'))]);
        const updated = await s.t.request({
          method: 'PUT',
          url: `/api/workflow/${id}`,
          token: s.admin,
          payload: workflowBody({ config: { steps } }),
        });
        expect(updated.statusCode).toBe(422);
        expect(updated.json().validationErrors).toEqual([
          { field, rule: 'secretOrigin', message: expect.any(String) },
        ]);
      },
    );

    it('a name bound to no origin is a 422 wherever it goes; bound origins, `*` names and env-made origins pass', async () => {
      const refused = await postWorkflow(
        s.t,
        s.admin,
        workflowBody({
          config: {
            steps: [
              {
                name: 'call',
                type: 'api',
                config: { url: s.partner.url('/x'), headers: { K: '{{env.OTHER_TOKEN}}' } },
              },
            ],
          },
        }),
      );
      expect(refused.statusCode).toBe(422);
      expect(refused.json().validationErrors).toEqual([
        {
          field: 'config.steps[0].config.url',
          rule: 'secretOrigin',
          message: expect.stringContaining('no origin'),
        },
      ]);
      for (const steps of [
        [call('https://CRM.example.com:443/orders')],
        [call('{{env.BASE}}/orders/{{input.id}}')],
        [{ name: 'call', type: 'api', config: { url: '{{env.BASE}}/x', payload: { base: '{{env.BASE}}' } } }],
      ]) {
        const response = await postWorkflow(s.t, s.admin, workflowBody({ config: { steps } }));
        expect(response.statusCode).toBe(201);
      }
    });

    it('reading env at all needs workflows:secrets: a role with only workflows:create gets 403 WORKFLOW_SECRETS_FORBIDDEN', async () => {
      await createRole(s.t, s.admin, 'author', { workflows: ['read', 'create', 'update'] });
      await createRole(s.t, s.admin, 'secret-author', { workflows: ['read', 'create', 'update', 'secrets'] });
      // Delegated authors work in their own site, through its host.
      const siteId = await createSite(s.t, s.admin, 'Alpha', 'alpha.example.com');
      const onSite = { host: 'alpha.example.com' };
      const save = (token: string, body: Record<string, unknown>, id?: string) =>
        s.t.request({
          method: id ? 'PUT' : 'POST',
          url: id ? `/api/workflow/${id}` : '/api/workflow',
          token,
          headers: onSite,
          payload: body,
        });
      const author = await createUser(s.t, { role: 'author', siteId });
      const withEnv = workflowBody({ config: { steps: [call(s.partner.url('/orders'))] } });
      const expectSecretsForbidden = (response: { statusCode: number; json(): unknown }) => {
        expect(response.statusCode).toBe(403);
        expect(response.json()).toMatchObject({
          success: false,
          code: 'WORKFLOW_SECRETS_FORBIDDEN',
          statusCode: 403,
        });
      };
      expectSecretsForbidden(await save(author.token, withEnv));
      // Even a name outside the allow-list: the permission is asked before the definition is checked.
      const unknownName = await save(
        author.token,
        workflowBody({
          config: {
            steps: [{ name: 'call', type: 'api', config: { url: s.partner.url('/x?k={{ env.PATH }}') } }],
          },
        }),
      );
      expectSecretsForbidden(unknownName);
      const plain = await save(author.token, workflowBody());
      expect(plain.statusCode).toBe(201);
      expectSecretsForbidden(await save(author.token, withEnv, plain.json().id));
      const kept = await s.t.request({
        method: 'GET',
        url: `/api/workflow/${plain.json().id}`,
        token: s.admin,
        headers: onSite,
      });
      expect(kept.json().config.steps).toEqual((workflowBody().config as { steps: unknown[] }).steps);

      const secretAuthor = await createUser(s.t, { role: 'secret-author', siteId });
      const allowed = await save(secretAuthor.token, withEnv);
      expect(allowed.statusCode).toBe(201);
    });
  });
});
