import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { useAppSuite } from '../utils/app-suite';

const SCRIPT = resolve(__dirname, '../../docs/attachment-examples.sh');

/** The README's attachment examples are docs/attachment-examples.sh, shown verbatim; here they run. */
describe('the README attachment examples', () => {
  const s = useAppSuite({ admin: false, listen: true });

  it('are docs/attachment-examples.sh, word for word, and run as pasted', async () => {
    const readme = readFileSync(resolve(__dirname, '../../README.md'), 'utf8');
    expect(readme).toContain('```bash\n' + readFileSync(SCRIPT, 'utf8') + '```');
    const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', SCRIPT], {
      env: { ...process.env, BASE: `http://127.0.0.1:${s.port}` },
    });
    expect(stdout).toContain('"filename":"claim.png","mediaType":"image/png"');
    expect(stdout).toContain('content-disposition: attachment; filename=claim.png');
    expect(stdout).toContain('photo.png downloaded byte for byte');
    expect(stdout).toContain('\nHello\n');
    expect(stdout).toContain('\nscan.png\n');
    expect(stdout).toContain('\nphoto photo.png, documents note.txt\n');
    expect(stdout).toContain('"code":"ATTACHMENT_TYPE_NOT_ALLOWED"');
  }, 60_000);
});
