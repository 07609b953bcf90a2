/** The bytes `start..end` (inclusive) of a file. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * The range a `Range` header asks for (RFC 9110 section 14): `bytes=a-b`, `bytes=a-` or `bytes=-n`,
 * one range only. `full`: no header, or one this service ignores as the RFC allows (another unit,
 * several ranges, a malformed value); `unsatisfiable`: it starts past the end (answered 416).
 */
export function parseRange(
  header: string | undefined,
  size: number,
): { kind: 'full' } | { kind: 'partial'; range: ByteRange } | { kind: 'unsatisfiable' } {
  const match = header === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return { kind: 'full' };
  if (match[1] === '') {
    // A suffix: the last n bytes.
    const length = Number(match[2]);
    if (length === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', range: { start: Math.max(0, size - length), end: size - 1 } };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (match[2] !== '' && Number(match[2]) < start) return { kind: 'full' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', range: { start, end } };
}
