import type { ServerResponse } from 'node:http';
import { adminToken } from '../factories/user.factory';
import { closedPort } from '../utils/free-port';
import { errorBody, expectError } from '../utils/api-error';
import { useAppSuite } from '../utils/app-suite';
import { createTestApp } from '../utils/test-app';

const API_KEY = 'sk-test-0123456789-very-secret';

const GOOD_DRAFT = {
  title: 'Event registration',
  type: 'form',
  tags: ['events'],
  schema: {
    type: 'object',
    required: ['name', 'email', 'age'],
    properties: {
      name: { type: 'string', title: 'Name', minLength: 1 },
      email: { type: 'string', title: 'E-mail', format: 'email' },
      age: { type: 'integer', title: 'Age', minimum: 0 },
    },
  },
  validationRules: [
    { name: 'adult', field: 'age', rule: { '>=': [{ var: 'age' }, 18] }, message: 'Adults only' },
  ],
  computedRules: [],
  preferences: { saveLimit: 1 },
};

/** The openai provider's settings, its endpoint at `baseUrl`. */
const openaiEnv = (baseUrl: string) => ({
  AI_PROVIDER: 'openai',
  AI_BASE_URL: baseUrl,
  AI_API_KEY: API_KEY,
  AI_MODEL: 'test-model',
});

/** A chat-completions answer whose assistant message is `content`. */
function answer(res: ServerResponse, content: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'test-model',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
    }),
  );
}

describe('POST /api/ai/configs/generate with the openai provider (a real chat-completions server on 127.0.0.1)', () => {
  const s = useAppSuite({
    partner: true,
    env: ({ partner }) => ({
      ...openaiEnv(partner.url('/v1')),
      // Long enough for two rounds on a loaded CI machine; the timeout case waits it out once.
      AI_TIMEOUT_MS: '3000',
    }),
  });

  const generate = (payload: object) =>
    s.t.request({ method: 'POST', url: '/api/ai/configs/generate', token: s.admin, payload });

  it('a good answer becomes the draft; the request speaks the protocol with a JSON-schema response format', async () => {
    s.partner.handle((_req, res) => answer(res, JSON.stringify(GOOD_DRAFT)));
    const response = await generate({
      prompt: 'Registration for our spring event; adults only',
      samples: 'name,email,age\nAnn,ann@example.com,34\n',
      locale: 'hu',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      title: 'Event registration',
      type: 'form',
      tags: ['events'],
      description: null,
      schema: GOOD_DRAFT.schema,
      validationRules: GOOD_DRAFT.validationRules,
      computedRules: [],
      preferences: { saveLimit: 1, allowEdit: true, allowDelete: true, storeComputedResults: false },
      provider: 'openai',
      warnings: [],
    });
    expect(s.partner.requests).toHaveLength(1);
    const [request] = s.partner.requests;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/v1/chat/completions');
    expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    const sent = JSON.parse(request.body);
    expect(sent).toMatchObject({
      model: 'test-model',
      temperature: 0,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'form_configuration', strict: false, schema: { type: 'object' } },
      },
    });
    expect(sent.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user']);
    expect(sent.messages[0].content).toContain('Hungarian');
    expect(sent.messages[1].content).toContain('Registration for our spring event');
    expect(sent.messages[1].content).toContain('{"name":"Ann","email":"ann@example.com","age":34}');
  });

  it('with save: true the repaired answer is created (201); the repair round carries the validation errors', async () => {
    const invalid = {
      ...GOOD_DRAFT,
      schema: { type: 'object', properties: { age: { type: 'whole number' } } },
      validationRules: [
        { name: 'adult', rule: { older_than: [{ var: 'age' }, 18] }, message: 'Adults only' },
      ],
    };
    let calls = 0;
    s.partner.handle((_req, res) => answer(res, JSON.stringify(++calls === 1 ? invalid : GOOD_DRAFT)));
    const response = await generate({ prompt: 'Event registration', save: true });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({
      id: expect.any(String),
      title: 'Event registration',
      provider: 'openai',
    });
    expect(s.partner.requests).toHaveLength(2);
    const repair = JSON.parse(s.partner.requests[1].body).messages;
    expect(repair.map((m: { role: string }) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(repair[2].content).toBe(JSON.stringify(invalid));
    expect(repair[3].content).toContain('- schema.properties.age.type:');
    expect(repair[3].content).toContain('- validationRules[0].rule:');
    const read = await s.t.request({
      method: 'GET',
      url: `/api/configs/${response.json().id}`,
      token: s.admin,
    });
    expect(read.json().validationRules).toEqual(GOOD_DRAFT.validationRules);
  });

  it('an answer still invalid after the repair round is a 502 AI_INVALID_ANSWER listing the problems; nothing is saved', async () => {
    s.partner.handle((_req, res) => answer(res, '{"title": "", "schema": {"type": 7}, "colour": "red"}'));
    const response = await generate({ prompt: 'Event registration', save: true });
    expect(response.statusCode).toBe(502);
    const body = response.json();
    expect(body).toMatchObject(
      errorBody(502, {
        code: 'AI_INVALID_ANSWER',
        error: "The language model's answer is not a valid configuration, even after a correction round.",
        details: { rounds: 2 },
      }),
    );
    expect(body.validationErrors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'title', rule: 'isLength' }),
        expect.objectContaining({ field: 'colour', rule: 'whitelistValidation' }),
      ]),
    );
    expect(s.partner.requests).toHaveLength(2);
    expect(
      (await s.t.request({ method: 'GET', url: '/api/configs', token: s.admin })).json().totalCount,
    ).toBe(0);
    expect(response.body).not.toContain(API_KEY);

    s.partner.handle((_req, res) => answer(res, 'Sure! Here is your form: ...'));
    const prose = await generate({ prompt: 'Event registration' });
    expect(prose.statusCode).toBe(502);
    expect(prose.json().validationErrors).toEqual([
      { field: '$root', rule: 'json', message: 'the answer is not JSON' },
    ]);
  });

  it('no answer within AI_TIMEOUT_MS is a 504 AI_TIMEOUT', async () => {
    s.partner.handle(() => undefined); // never answers
    const response = await generate({ prompt: 'Event registration' });
    expectError(response, 504, {
      code: 'AI_TIMEOUT',
      error: 'The language model did not answer in time (limit 3000 ms).',
      details: { timeoutMs: 3000 },
    });
  });

  it('an error status of the endpoint is a 502 AI_UNAVAILABLE naming only the status, never the key', async () => {
    s.partner.handle((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${API_KEY}` } }));
    });
    const response = await generate({ prompt: 'Event registration' });
    expectError(response, 502, {
      code: 'AI_UNAVAILABLE',
      error: 'The language model service cannot be reached or refused the request; try again later.',
      details: { status: 401 },
    });
    expect(response.body).not.toContain(API_KEY);
  });
});

describe('the openai provider with an unreachable endpoint', () => {
  it('answers 502 AI_UNAVAILABLE with the connection error code only', async () => {
    const port = await closedPort();
    const t = await createTestApp({ env: openaiEnv(`http://127.0.0.1:${port}/v1`) });
    try {
      const response = await t.request({
        method: 'POST',
        url: '/api/ai/configs/generate',
        token: await adminToken(t),
        payload: { prompt: 'Event registration' },
      });
      expect(response.statusCode).toBe(502);
      expect(response.json()).toMatchObject({ code: 'AI_UNAVAILABLE', details: { reason: 'ECONNREFUSED' } });
      expect(response.body).not.toContain(API_KEY);
    } finally {
      await t.close();
    }
  });
});
