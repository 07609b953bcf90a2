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
    { url: 'https://x.test', method: 'POST', file: { field: 'documents', as: 'body' } },
    {
      url: 'https://x.test',
      method: 'PUT',
      headers: { 'Content-Type': 'application/pdf' },
      file: { field: 'scan', as: 'body' },
    },
    {
      url: 'https://x.test',
      method: 'PATCH',
      payload: { id: '{{savedData._id}}' },
      file: { field: 'documents', as: 'multipart', partName: 'files[]', dataPartName: 'meta.json' },
    },
    { url: 'https://x.test', method: 'POST', file: { field: 'documents', as: 'multipart' } },
  ])('accepts %j', (config) => {
    expect(problems(config)).toEqual([]);
  });

  it('says what a file option conflicts with', () => {
    const messages = (plain: object) =>
      validateSync(plainToInstance(ApiStepConfig, plain)).flatMap((error) =>
        Object.values(error.constraints ?? {}),
      );
    expect(messages({ url: 'https://x.test', file: { field: 'd', as: 'body' } })).toEqual([
      'file needs method POST, PUT or PATCH (the file is sent as the request body)',
    ]);
    expect(
      messages({ url: 'https://x.test', method: 'POST', payload: 'x', file: { field: 'd', as: 'body' } }),
    ).toEqual(['file with "as": "body" sends the file alone: leave payload out, or use "as": "multipart"']);
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
    // file: a field of the record, sent as the body or in a multipart body, by a method with a body.
    [{ url: 'https://x.test', method: 'POST', file: 'documents' }, ['file']],
    [{ url: 'https://x.test', method: 'POST', file: { as: 'body' } }, ['file.field']],
    [{ url: 'https://x.test', method: 'POST', file: { field: '', as: 'body' } }, ['file.field']],
    [{ url: 'https://x.test', method: 'POST', file: { field: '{{input.f}}', as: 'body' } }, ['file.field']],
    [{ url: 'https://x.test', method: 'POST', file: { field: 'd', as: 'stream' } }, ['file.as']],
    [{ url: 'https://x.test', method: 'POST', file: { field: 'd', as: 'body', extra: 1 } }, ['file.extra']],
    [{ url: 'https://x.test', file: { field: 'd', as: 'body' } }, ['file']],
    [{ url: 'https://x.test', method: 'DELETE', file: { field: 'd', as: 'multipart' } }, ['file']],
    [
      { url: 'https://x.test', method: 'POST', payload: { a: 1 }, file: { field: 'd', as: 'body' } },
      ['file'],
    ],
    [
      { url: 'https://x.test', method: 'POST', file: { field: 'd', as: 'body', partName: 'upload' } },
      ['file.partName'],
    ],
    [
      { url: 'https://x.test', method: 'POST', file: { field: 'd', as: 'multipart', partName: 'a"b' } },
      ['file.partName'],
    ],
    [
      {
        url: 'https://x.test',
        method: 'POST',
        file: { field: 'd', as: 'multipart', dataPartName: 'x\r\ny' },
      },
      ['file.dataPartName'],
    ],
    [
      { url: 'https://x.test', method: 'POST', file: { field: 'd', as: 'multipart', dataPartName: 'file' } },
      ['file'],
    ],
    [
      {
        url: 'https://x.test',
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data' },
        file: { field: 'd', as: 'multipart' },
      },
      ['file'],
    ],
  ])('rejects %j', (config, paths) => {
    expect(problems(config)).toEqual(paths);
  });
});
