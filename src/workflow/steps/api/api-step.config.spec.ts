import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { ApiStepConfig } from './api-step.config';

/** The failing property paths, as the runner would report them under `config.`. */
function problems(plain: object): string[] {
  const errors = validateSync(plainToInstance(ApiStepConfig, plain), {
    whitelist: true,
    forbidNonWhitelisted: true,
  });
  const paths: string[] = [];
  const walk = (list: typeof errors, prefix: string) => {
    for (const error of list) {
      if (error.constraints) paths.push(`${prefix}${error.property}`);
      walk(error.children ?? [], `${prefix}${error.property}.`);
    }
  };
  walk(errors, '');
  return paths;
}

describe('ApiStepConfig', () => {
  it.each([
    { url: 'https://api.example.com/hook' },
    { url: 'HTTP://api.example.com' },
    { url: '{{env.CRM_URL}}/customers/{{input.id}}' },
    {
      url: 'https://api.example.com/{{savedData._id}}',
      method: 'POST',
      payload: { id: '{{savedData._id}}' },
    },
    {
      url: 'https://x.test',
      method: 'PUT',
      payload: '{"a":"{{input.a}}"}',
      headers: { Authorization: 'Bearer {{env.T}}' },
    },
    { url: 'https://x.test', method: 'DELETE', timeoutMs: 60000, maxResponseBytes: 50 * 1024 * 1024 },
    { url: 'https://x.test', compensate: { method: 'DELETE', url: 'https://x.test/{{result.data.id}}' } },
    {
      url: 'https://x.test',
      compensate: { method: 'POST', url: '{{env.UNDO_URL}}', headers: {}, payload: 'x' },
    },
  ])('accepts %j', (config) => {
    expect(problems(config)).toEqual([]);
  });

  it('defaults the method to GET', () => {
    expect(plainToInstance(ApiStepConfig, { url: 'https://x.test' }).method).toBe('GET');
  });

  it.each([
    [{}, ['url']],
    [{ url: '' }, ['url']],
    [{ url: 'ftp://x.test' }, ['url']],
    [{ url: 'file:///etc/passwd' }, ['url']],
    [{ url: 'x.test/{{a}}' }, ['url']],
    [{ url: 42 }, ['url']],
    [{ url: 'https://x.test', method: 'HEAD' }, ['method']],
    [{ url: 'https://x.test', method: 'get' }, ['method']],
    [{ url: 'https://x.test', headers: { a: 1 } }, ['headers']],
    [{ url: 'https://x.test', headers: ['a'] }, ['headers']],
    [{ url: 'https://x.test', payload: 5 }, ['payload']],
    [{ url: 'https://x.test', payload: ['a'] }, ['payload']],
    [{ url: 'https://x.test', timeoutMs: 0 }, ['timeoutMs']],
    [{ url: 'https://x.test', timeoutMs: 60001 }, ['timeoutMs']],
    [{ url: 'https://x.test', timeoutMs: 1.5 }, ['timeoutMs']],
    [{ url: 'https://x.test', maxResponseBytes: 50 * 1024 * 1024 + 1 }, ['maxResponseBytes']],
    [{ url: 'https://x.test', compensate: { url: 'https://x.test' } }, ['compensate.method']],
    [{ url: 'https://x.test', compensate: { method: 'DELETE', url: 'gopher://x' } }, ['compensate.url']],
    [
      { url: 'https://x.test', compensate: { method: 'DELETE', url: 'https://x', headers: { a: [] } } },
      ['compensate.headers'],
    ],
    [{ url: 'https://x.test', extra: 1 }, ['extra']],
    // The origin may come only from literal text or env.
    [{ url: '{{input.endpoint}}' }, ['url']],
    [{ url: 'https://x.test{{input.path}}' }, ['url']],
    [{ url: '{{env.CRM_URL}}{{input.path}}' }, ['url']],
    [
      { url: 'https://x.test', compensate: { method: 'DELETE', url: '{{result.data.self}}' } },
      ['compensate.url'],
    ],
  ])('rejects %j', (config, paths) => {
    expect(problems(config)).toEqual(paths);
  });
});
