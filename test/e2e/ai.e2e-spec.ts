import { Module } from '@nestjs/common';
import { ConfigDraftProvider } from '../../src/ai/providers/config-draft-provider.decorator';
import type { ConfigDraftGenerator, ConfigDraftResult } from '../../src/ai/providers/config-draft-provider';
import type { LightMyRequestResponse } from 'fastify';
import { storedConfig } from '../factories/config.factory';
import { createSite } from '../factories/site.factory';
import { adminToken, createUser } from '../factories/user.factory';
import { errorBody, expectError } from '../utils/api-error';
import { useAppSuite } from '../utils/app-suite';
import { createTestApp, type TestApp } from '../utils/test-app';
import { bootError } from '../utils/workflow-test-app';

const CSV = [
  'name,email,age,signedUpOn,plan,newsletter,address.city',
  'Kovács Anna,anna@example.com,34,2026-01-05,basic,true,Budapest',
  '"Smith, Bob",bob@example.org,41,2026-01-07,pro,false,Pécs',
  'Eve,eve@example.com,,2026-02-11,basic,false,',
  'Dan,dan@example.com,29,2026-02-12,basic,true,Győr',
  '',
].join('\r\n');

@ConfigDraftProvider({ name: 'fixed' })
class FixedDraftProvider implements ConfigDraftGenerator {
  async generate(): Promise<ConfigDraftResult> {
    return {
      draft: {
        title: 'From a module of its own',
        schema: { type: 'object', properties: { q: { type: 'integer' } } },
        validationRules: [{ name: 'positive', field: 'q', rule: { '>': [{ var: 'q' }, 0] }, message: 'm' }],
      },
      warnings: [{ code: 'CUSTOM', message: 'made by a custom provider' }],
    };
  }
}

@ConfigDraftProvider({ name: 'broken' })
class BrokenDraftProvider implements ConfigDraftGenerator {
  async generate(): Promise<ConfigDraftResult> {
    return { draft: { title: 'x', schema: { type: 'no-such-type' }, unknown: 1 }, warnings: [] };
  }
}

@ConfigDraftProvider({ name: 'infer' })
class ShadowInferProvider extends FixedDraftProvider {}

@Module({ providers: [FixedDraftProvider, BrokenDraftProvider] })
class CustomDraftProvidersModule {}

@Module({ providers: [ShadowInferProvider] })
class ShadowInferModule {}

describe('POST /api/ai/configs/generate with the built-in infer provider', () => {
  const s = useAppSuite({ env: { BODY_LIMIT: '1048576' }, users: [{}, { role: 'manager' }] });

  const generate = (payload: unknown, token = s.admin, url = '/api/ai/configs/generate') =>
    s.t.request({ method: 'POST', url, token, payload: payload as object });

  it('turns a CSV sample into a saved configuration with one request (201), readable as any configuration', async () => {
    const response = await generate({
      prompt: 'Newsletter sign-up\nfor the spring campaign',
      samples: CSV,
      save: true,
    });
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(body).toEqual(
      storedConfig({
        title: 'Newsletter sign-up',
        type: 'form',
        schema: {
          type: 'object',
          properties: {
            name: { title: 'Name', type: 'string' },
            email: { title: 'Email', type: 'string', format: 'email' },
            age: { title: 'Age', type: 'integer', minimum: 29, maximum: 41 },
            signedUpOn: { title: 'Signed up on', type: 'string', format: 'date' },
            plan: { title: 'Plan', type: 'string', enum: ['basic', 'pro'] },
            newsletter: { title: 'Newsletter', type: 'boolean' },
            address: {
              title: 'Address',
              type: 'object',
              properties: { city: { title: 'City', type: 'string' } },
              required: ['city'],
            },
          },
          required: ['name', 'email', 'signedUpOn', 'plan', 'newsletter'],
        },
        provider: 'infer',
        warnings: [
          {
            code: 'RANGES_FROM_SAMPLES',
            message:
              'The minimum and maximum of age are the ranges seen in the samples; widen them before saving if needed.',
          },
          {
            code: 'ENUM_FROM_SAMPLES',
            field: 'plan',
            message:
              'plan accepts only the values seen in the samples (basic, pro); remove the enum if others are allowed.',
          },
          {
            code: 'PROMPT_IGNORED',
            message:
              'The infer provider builds the draft from the samples only; the prompt was used for the title.',
          },
        ],
      }),
    );
    const read = await s.t.request({ method: 'GET', url: `/api/configs/${body.id}`, token: s.admin });
    const { provider: _provider, warnings: _warnings, ...saved } = body;
    expect(read.json()).toEqual(saved);
    // The saved form accepts a record shaped like the samples and refuses a bad e-mail.
    const record = {
      name: 'Zoe',
      email: 'zoe@example.com',
      signedUpOn: '2026-03-01',
      plan: 'pro',
      newsletter: true,
    };
    expect(
      (await s.t.request({ method: 'POST', url: `/api/data/${body.id}`, token: s.admin, payload: record }))
        .statusCode,
    ).toBe(201);
    const bad = await s.t.request({
      method: 'POST',
      url: `/api/data/${body.id}`,
      token: s.admin,
      payload: { ...record, email: 'zoe' },
    });
    expect(bad.statusCode).toBe(400);
  });

  it('without save answers 200 with a draft that POST /api/configs accepts as it stands; nothing is stored', async () => {
    const samples = [
      { customer: 'Ann', status: 'open', placedAt: '2026-03-01T10:00:00Z', lines: [{ sku: 'A', qty: 2 }] },
      { customer: 'Bob', status: 'open', placedAt: '2026-03-02T10:00:00Z', lines: [] },
      { customer: 'Eve', status: 'closed', placedAt: '2026-03-03T10:00:00Z', lines: [{ sku: 'B', qty: 1 }] },
      {
        customer: 'Dan',
        status: 'open',
        placedAt: '2026-03-04T10:00:00Z',
        lines: [{ sku: 'A', qty: 5 }],
        vip: true,
      },
    ];
    const response = await generate({ samples, type: 'grid', title: 'Orders', locale: 'hu' });
    expect(response.statusCode).toBe(200);
    const { provider, warnings, ...draft } = response.json();
    expect(provider).toBe('infer');
    expect(Object.keys(draft)).toEqual([
      'title',
      'type',
      'tags',
      'description',
      'schema',
      'validationRules',
      'computedRules',
      'preferences',
    ]);
    expect(draft).toMatchObject({ title: 'Orders', type: 'grid' });
    expect(draft.schema.properties.status).toEqual({
      title: 'Status',
      type: 'string',
      enum: ['open', 'closed'],
    });
    expect(draft.schema.properties.placedAt.format).toBe('date-time');
    expect(draft.schema.properties.lines.items.required).toEqual(['sku', 'qty']);
    expect(warnings.map((w: { code: string }) => w.code)).toEqual([
      'RANGES_FROM_SAMPLES',
      'ENUM_FROM_SAMPLES',
    ]);
    expect(warnings[1]).toEqual({
      code: 'ENUM_FROM_SAMPLES',
      field: 'status',
      message: expect.stringContaining('csak a mintákban látott értékeket'),
    });
    expect(
      (await s.t.request({ method: 'GET', url: '/api/configs', token: s.admin })).json().totalCount,
    ).toBe(0);
    const created = await s.t.request({
      method: 'POST',
      url: '/api/configs',
      token: s.admin,
      payload: draft,
    });
    expect(created.statusCode).toBe(201);
  });

  it('a prompt alone is a 422 asking for samples; neither prompt nor samples is a 422', async () => {
    const promptOnly = await generate({ prompt: 'A form for event registration' });
    expectError(promptOnly, 422, {
      code: 'AI_SAMPLES_REQUIRED',
      error:
        'The infer provider builds a configuration from sample data: send samples (records or CSV text) with the prompt.',
    });
    const hungarian = await generate(
      { prompt: 'Eseményre jelentkezés' },
      s.admin,
      '/api/ai/configs/generate?lang=hu',
    );
    expect(hungarian.json().error).toContain('mintaadatokból');
    const nothing = await generate({ samples: [] });
    expect(nothing.statusCode).toBe(422);
    expect(nothing.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      validationErrors: [{ field: 'samples', rule: 'required', message: expect.any(String) }],
    });
  });

  it('refuses malformed bodies and samples with a 422', async () => {
    const cases: [unknown, string][] = [
      [{ samples: [1, 2] }, 'samples'],
      [{ samples: [[{ a: 1 }]] }, 'samples'],
      [{ samples: 12 }, 'samples'],
      [{ samples: 'a,b\n"1,2' }, 'samples'],
      [{ samples: 'a,a\n1,2' }, 'samples'],
      [{ samples: [{ a: 1 }], type: 'table' }, 'type'],
      [{ samples: [{ a: 1 }], locale: 'de' }, 'locale'],
      [{ samples: [{ a: 1 }], save: 'yes' }, 'save'],
      [{ samples: [{ a: 1 }], siteId: null }, 'siteId'],
    ];
    for (const [payload, field] of cases) {
      const response = await generate(payload);
      expect({ payload, status: response.statusCode }).toEqual({ payload, status: 422 });
      expect(response.json().validationErrors.map((e: { field: string }) => e.field)).toContain(field);
    }
  });

  it('a CSV header naming a prototype property is a 422 naming the header, never a 500', async () => {
    const headers = ['__proto__', 'constructor', 'prototype', 'a.__proto__', 'toString', 'hasOwnProperty'];
    for (const header of headers) {
      for (const save of [false, true]) {
        const response = await generate({ samples: `name,${header}\nAnn,1\n`, save });
        expect({ header, save, status: response.statusCode }).toEqual({ header, save, status: 422 });
        expect(response.json()).toEqual(
          errorBody(422, {
            error: 'The request is not valid.',
            code: 'VALIDATION_FAILED',
            validationErrors: [
              {
                field: 'samples',
                rule: 'csvHeader',
                message: `the header "${header}" names a JavaScript object property (such as __proto__ or constructor), which cannot be a field name`,
              },
            ],
          }),
        );
      }
    }
  });

  it('oversized input: more than 1,000 records or 256 KB of CSV is a 422, a body over BODY_LIMIT a 413', async () => {
    const records = Array.from({ length: 1001 }, (_, i) => ({ n: i }));
    const tooMany = await generate({ samples: records });
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json().validationErrors).toEqual([
      {
        field: 'samples',
        rule: 'isSamples',
        message: 'samples must be CSV text or an array of at most 1000 objects',
      },
    ]);
    const manyRows = await generate({ samples: `n\n${'1\n'.repeat(1001)}` });
    expect(manyRows.statusCode).toBe(422);
    expect(manyRows.json().validationErrors[0]).toMatchObject({ field: 'samples', rule: 'maxRecords' });
    const bigCsv = await generate({ samples: `text\n${'x'.repeat(300 * 1024)}` });
    expect(bigCsv.statusCode).toBe(422);
    expect(bigCsv.json().validationErrors[0]).toMatchObject({ field: 'samples', rule: 'maxBytes' });
    const huge = await generate({ samples: `text\n${'x'.repeat(1100 * 1024)}` });
    expect(huge.statusCode).toBe(413);
    expect(huge.json().code).toBe('PAYLOAD_TOO_LARGE');
    const atLimit = await generate({ samples: records.slice(0, 1000) });
    expect(atLimit.statusCode).toBe(200);
  });

  it('needs the role permission configs:create: user and manager get 403, a custom role granted it may', async () => {
    for (const caller of s.users) {
      const response = await generate({ samples: CSV, save: true }, caller.token);
      expectError(response, 403, { code: 'FORBIDDEN', error: 'You are not authorized to do this.' });
    }
    expect(
      (await s.t.request({ method: 'POST', url: '/api/ai/configs/generate', payload: {} })).statusCode,
    ).toBe(401);
    await s.t.request({
      method: 'POST',
      url: '/api/roles',
      token: s.admin,
      payload: { name: 'designer', permissions: { configs: ['create'] } },
    });
    // A non-admin's saved draft is stored in their own site (a global user on no site's host may not share it).
    const siteId = await createSite(s.t, s.admin, 'Design', 'design.example.com');
    const designer = await createUser(s.t, { role: 'designer', siteId });
    const onSite = { host: 'design.example.com' };
    const saved = await s.t.request({
      method: 'POST',
      url: '/api/ai/configs/generate',
      token: designer.token,
      headers: onSite,
      payload: { samples: CSV, save: true },
    });
    expect(saved.statusCode).toBe(201);
    expect(saved.json().siteId).toBe(siteId);
    const shared = await generate(
      { samples: CSV, save: true },
      (await createUser(s.t, { role: 'designer' })).token,
    );
    expect(shared.statusCode).toBe(403);
    expect(shared.json()).toMatchObject({ code: 'SITE_FORBIDDEN' });
  });

  it('is in the OpenAPI document with both answers', async () => {
    const doc = (await s.t.request({ method: 'GET', url: '/api-docs-json' })).json();
    const operation = doc.paths['/api/ai/configs/generate'].post;
    expect(operation.tags).toEqual(['ai']);
    expect(Object.keys(operation.responses)).toEqual(
      expect.arrayContaining(['200', '201', '401', '403', '413', '422', '502', '504']),
    );
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['GenerateConfigDto', 'GeneratedConfigDto', 'SavedGeneratedConfigDto']),
    );
  });
});

describe('configuration draft providers registered from modules of their own', () => {
  /** Boots an app whose AI_PROVIDER is one of the custom module's, asks it for a saved draft, and checks the answer. */
  async function generateWith(
    provider: string,
    check: (response: LightMyRequestResponse, t: TestApp, admin: string) => Promise<void>,
  ): Promise<void> {
    const t = await createTestApp({ env: { AI_PROVIDER: provider }, modules: [CustomDraftProvidersModule] });
    try {
      const admin = await adminToken(t);
      const response = await t.request({
        method: 'POST',
        url: '/api/ai/configs/generate',
        token: admin,
        payload: { prompt: 'anything', save: true },
      });
      await check(response, t, admin);
    } finally {
      await t.close();
    }
  }

  it('AI_PROVIDER chooses a custom provider; its draft is checked and completed like any other', () =>
    generateWith('fixed', async (response) => {
      expect(response.statusCode).toBe(201);
      expect(response.json()).toMatchObject({
        title: 'From a module of its own',
        type: 'form',
        provider: 'fixed',
        warnings: [{ code: 'CUSTOM', message: 'made by a custom provider' }],
      });
    }));

  it('a draft POST /api/configs would refuse is never answered: 502 AI_INVALID_ANSWER listing the problems', () =>
    generateWith('broken', async (response, t, admin) => {
      expect(response.statusCode).toBe(502);
      expect(response.json()).toMatchObject({
        code: 'AI_INVALID_ANSWER',
        validationErrors: [{ field: 'unknown', rule: 'whitelistValidation' }],
      });
      expect((await t.request({ method: 'GET', url: '/api/configs', token: admin })).json().totalCount).toBe(
        0,
      );
    }));

  it('a provider name registered twice, or an AI_PROVIDER naming none, stops the boot', async () => {
    const twice = await bootError([ShadowInferModule]);
    expect(twice?.message).toMatch(/"infer" is registered twice/);
    expect(twice?.message).toContain('ShadowInferProvider');
    const unknown = await bootError([], { AI_PROVIDER: 'nope' });
    expect(unknown?.message).toBe(
      'AI_PROVIDER "nope" names no configuration draft provider (known: infer, openai)',
    );
  });
});
