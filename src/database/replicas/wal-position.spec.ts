import { formatWalPosition, parseWalPosition } from './wal-position';

describe('WAL positions', () => {
  it('parse as numbers that compare like the positions, and print as PostgreSQL prints them', () => {
    expect(parseWalPosition('0/16B3748')).toBe(0x16b3748n);
    expect(parseWalPosition('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
    expect(parseWalPosition('1/0')! > parseWalPosition('0/FFFFFFFF')!).toBe(true);
    expect(parseWalPosition(' 0/a ')).toBe(10n);
    expect(formatWalPosition(parseWalPosition('16/b374d848')!)).toBe('16/B374D848');
    expect(formatWalPosition(0n)).toBe('0/0');
  });

  it('refuse anything else', () => {
    for (const text of ['', '16', '16/', '/1', 'G/1', '123456789/0', '0/1/2', '-1/0', '0x1/0'])
      expect(parseWalPosition(text)).toBeNull();
  });
});
