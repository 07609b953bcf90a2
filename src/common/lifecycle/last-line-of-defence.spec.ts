import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

describe('installLastLineOfDefence', () => {
  it('logs an escaped error and rejection with their codes and causes, and the process keeps running', async () => {
    // A process of its own: the handlers are process-wide.
    const script = `
      const { installLastLineOfDefence } = require('./src/common/lifecycle/last-line-of-defence');
      installLastLineOfDefence({ error: (fields, message) => console.log(JSON.stringify({ code: fields.code, message })) });
      setTimeout(() => { throw new Error('socket gone', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }); });
      Promise.reject(new Error('nobody awaited this'));
      setTimeout(() => console.log(JSON.stringify({ alive: true })), 100);
    `;
    const { stdout } = await run(process.execPath, ['-r', '@swc-node/register', '-e', script], {
      cwd: resolve(__dirname, '../../..'),
    });
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      {
        code: 'UNHANDLED_REJECTION',
        message: 'Unhandled promise rejection (the process keeps serving): nobody awaited this',
      },
      {
        code: 'UNHANDLED_ERROR',
        message: 'Unhandled error (the process keeps serving): socket gone <- reset [ECONNRESET]',
      },
      { alive: true },
    ]);
  });
});
