import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from '../factories/attachment-files';
import { expectError } from '../utils/api-error';
import { useAppSuite } from '../utils/app-suite';
import { countRows } from '../utils/row-counts';
import { storedContents } from '../utils/stored-contents';

/**
 * A 1 MB disk of its own (tmpfs), for the filesystem store to fill. Mounting needs root (CI runs as
 * root); elsewhere the suite is skipped, and says why.
 */
function smallDisk(): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'fdws-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
}

const disk = smallDisk();
if (!disk) console.warn('attachment-storage-full: skipped (mounting a tmpfs needs root)');
const onSmallDisk = disk ? describe : describe.skip;

onSmallDisk('the filesystem store on a full disk', () => {
  const s = useAppSuite({
    users: 1,
    env: { ATTACHMENT_STORE: 'filesystem', ATTACHMENT_DIR: disk ?? '' },
    forms: [
      {
        title: 'Files',
        schema: { type: 'object', properties: { file: { type: 'string', format: 'attachment' } } },
        computedRules: [],
        validationRules: [],
      },
    ],
  });
  afterAll(() => {
    if (disk) execFileSync('umount', [disk]);
  });
  const upload = (bytes: Buffer) =>
    s.t.request({
      method: 'POST',
      url: `/api/data/${s.configId}/attachments?filename=f.bin`,
      token: s.user.token,
      headers: { 'content-type': 'application/octet-stream' },
      payload: bytes,
    });

  it('refuses an upload that does not fit with 507, keeps nothing of it, and takes the next that fits', async () => {
    expectError(await upload(randomBytes(2 * 1024 * 1024)), 507, {
      code: 'ATTACHMENT_STORAGE_FULL',
      error: 'There is no room left to store the file; try again later.',
    });
    expect(await countRows(s.t, { blobs: 'attachment_blobs', attachments: 'attachments' })).toEqual({
      blobs: 0,
      attachments: 0,
    });
    expect(await storedContents(s.t)).toBe(0);
    const small = await upload(PNG);
    expect(small.statusCode).toBe(201);
    expect(await storedContents(s.t)).toBe(1);
  });
});
