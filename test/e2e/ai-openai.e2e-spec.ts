import type { ServerResponse } from 'node:http';
import { adminToken } from '../factories/user.factory';
import { closedPort } from '../utils/free-port';
import { startHttpServer, type HttpTestServer } from '../utils/http-test-server';
import { createTestApp, type TestApp } from '../utils/test-app';

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
  let server: HttpTestServer;
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    server = await startHttpServer();
    t = await createTestApp({
      env: {
        AI_PROVIDER: 'openai',
        AI_BASE_URL: server.url('/v1'),
        AI_API_KEY: API_KEY,
        AI_MODEL: 'test-model',
        // Long enough for two rounds on a loaded CI machine; the timeout case waits it out once.
        AI_TIMEOUT_MS: '3000',
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await server.close();
  });
  beforeEach(async () => {
    await t.reset();
    server.reset();
    admin = await adminToken(t);
  });

  const generate = (payload: object) =>
    t.request({ method: 'POST', url: '/api/ai/configs/generate', token: admin, payload });

  it('a good answer becomes the draft; the request speaks the protocol with a JSON-schema response format', async () => {
    server.handle((_req, res) => answer(res, JSON.stringify(GOOD_DRAFT)));
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
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
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
    server.handle((_req, res) => answer(res, JSON.stringify(++calls === 1 ? invalid : GOOD_DRAFT)));
    const response = await generate({ prompt: 'Event registration', save: true });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({
      id: expect.any(String),
      title: 'Event registration',
      provider: 'openai',
    });
    expect(server.requests).toHaveLength(2);
    const repair = JSON.parse(server.requests[1].body).messages;
    expect(repair.map((m: { role: string }) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(repair[2].content).toBe(JSON.stringify(invalid));
    expect(repair[3].content).toContain('- schema.properties.age.type:');
    expect(repair[3].content).toContain('- validationRules[0].rule:');
    const read = await t.request({ method: 'GET', url: `/api/configs/${response.json().id}`, token: admin });
    expect(read.json().validationRules).toEqual(GOOD_DRAFT.validationRules);
  });

  it('an answer still invalid after the repair round is a 502 AI_INVALID_ANSWER listing the problems; nothing is saved', async () => {
    server.handle((_req, res) => answer(res, '{"title": "", "schema": {"type": 7}, "colour": "red"}'));
    const response = await generate({ prompt: 'Event registration', save: true });
    expect(response.statusCode).toBe(502);
    const body = response.json();
    expect(body).toMatchObject({
      success: false,
      code: 'AI_INVALID_ANSWER',
      statusCode: 502,
      error: "The language model's answer is not a valid configuration, even after a correction round.",
      details: { rounds: 2 },
    });
    expect(body.validationErrors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'title', rule: 'isLength' }),
        expect.objectContaining({ field: 'colour', rule: 'whitelistValidation' }),
      ]),
    );
    expect(server.requests).toHaveLength(2);
    expect((await t.request({ method: 'GET', url: '/api/configs', token: admin })).json().totalCount).toBe(0);
    expect(response.body).not.toContain(API_KEY);

    server.handle((_req, res) => answer(res, 'Sure! Here is your form: ...'));
    const prose = await generate({ prompt: 'Event registration' });
    expect(prose.statusCode).toBe(502);
    expect(prose.json().validationErrors).toEqual([
      { field: '$root', rule: 'json', message: 'the answer is not JSON' },
    ]);
  });

  it('no answer within AI_TIMEOUT_MS is a 504 AI_TIMEOUT', async () => {
    server.handle(() => undefined); // never answers
    const response = await generate({ prompt: 'Event registration' });
    expect(response.statusCode).toBe(504);
    expect(response.json()).toEqual({
      success: false,
      code: 'AI_TIMEOUT',
      statusCode: 504,
      error: 'The language model did not answer in time (limit 3000 ms).',
      details: { timeoutMs: 3000 },
    });
  });

  it('an error status of the endpoint is a 502 AI_UNAVAILABLE naming only the status, never the key', async () => {
    server.handle((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${API_KEY}` } }));
    });
    const response = await generate({ prompt: 'Event registration' });
    expect(response.statusCode).toBe(502);
    expect(response.json()).toEqual({
      success: false,
      code: 'AI_UNAVAILABLE',
      statusCode: 502,
      error: 'The language model service cannot be reached or refused the request; try again later.',
      details: { status: 401 },
    });
    expect(response.body).not.toContain(API_KEY);
  });
});

describe('the openai provider with an unreachable endpoint', () => {
  it('answers 502 AI_UNAVAILABLE with the connection error code only', async () => {
    const port = await closedPort();
    const t = await createTestApp({
      env: {
        AI_PROVIDER: 'openai',
        AI_BASE_URL: `http://127.0.0.1:${port}/v1`,
        AI_API_KEY: API_KEY,
        AI_MODEL: 'test-model',
      },
    });
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
