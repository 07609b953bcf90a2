import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { useAppSuite } from '../utils/app-suite';
import { TEST_ADMIN } from '../utils/test-app';

const SCRIPT = resolve(__dirname, '../../docs/examples.sh');

/**
 * The README's examples are docs/examples.sh, shown verbatim; here they run, every command
 * stopping the script on failure, against the service listening on a port with default settings.
 */
describe('the README examples', () => {
  const s = useAppSuite({ admin: false, listen: true });

  it('log in with the default admin, the account the test app seeds', () => {
    expect(TEST_ADMIN).toEqual({ email: 'admin@example.com', password: 'admin12345' });
  });

  it('are docs/examples.sh, word for word', () => {
    const readme = readFileSync(resolve(__dirname, '../../README.md'), 'utf8');
    expect(readme).toContain('```bash\n' + readFileSync(SCRIPT, 'utf8') + '```');
  });

  it('run as pasted against a started service', async () => {
    const stdout = await promisify(execFile)('bash', ['-euo', 'pipefail', SCRIPT], {
      env: { ...process.env, BASE: `http://127.0.0.1:${s.port}` },
      maxBuffer: 10 * 1024 * 1024,
    }).then(
      (result) => result.stdout,
      // The failing command's answer is the last output line: show where the script stopped.
      (error: { message: string; stdout: string }) => {
        throw new Error(`${error.message}\n${error.stdout.split('\n').slice(-6).join('\n')}`);
      },
    );

    expect(stdout).toContain('"code":"DATA_VALIDATION_FAILED"');
    expect(stdout).toContain('"code":"DRAFT_INCOMPLETE"');
    expect(stdout).toContain('"status":"success"');
    expect(stdout).toContain('name,qty,city');
    expect(stdout).toContain(
      '"permissions":["viewForm","createResults","viewOwnResults","executeWorkflows"]',
    );
  }, 90_000);
});
