import { parseRetryAfter } from './retry-after';

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it.each([
    [undefined, undefined],
    ['0', 0],
    ['3', 3000],
    [' 120 ', 120_000],
    ['Wed, 01 Jan 2025 00:00:30 GMT', 30_000],
    ['Tue, 31 Dec 2024 23:59:00 GMT', 0],
    ['soon', undefined],
    ['-5', undefined],
    ['1.5', undefined],
  ])('%s -> %s', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });
});
