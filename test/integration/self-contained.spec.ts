import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
// Built from parts so this file does not match itself.
const OUTSIDE = new RegExp(
  ['SP' + 'EC', 'DESIGN' + '\\.md', 'GRID-' + 'PROTOCOL', '[Ii]ssue' + ' [0-9]+'].join('|'),
);

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** Code and README cite only documents that are in the repository (docs/). */
describe('the repository is self-contained', () => {
  it('cites no document outside it, and the documents it cites exist', () => {
    const files = [
      ...['src', 'test', 'bench'].flatMap((dir) => filesUnder(join(ROOT, dir))),
      join(ROOT, 'README.md'),
    ];
    const outside = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line, index) => `${file.slice(ROOT.length + 1)}:${index + 1}: ${line.trim()}`)
        .filter((line) => OUTSIDE.test(line.slice(line.indexOf(': ') + 2))),
    );

    expect(outside).toEqual([]);
    for (const doc of ['docs/design.md', 'docs/grid-protocol.md', 'docs/examples.sh'])
      expect(existsSync(join(ROOT, doc))).toBe(true);
  });
});
