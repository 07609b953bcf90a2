import { envSecrets, redact, redactedExcerpt, REDACTED, secretForms } from './redaction';

describe('redaction of env secrets', () => {
  const secret = 'Tok"en\\/é-0123456789';
  const secrets = new Set([secret]);

  it('takes the allow-listed values of at least 4 characters as secrets', () => {
    const values = { A: 'abcd', B: 'abc', C: '', D: undefined, E: 'x'.repeat(40) };
    expect(envSecrets(['A', 'B', 'C', 'D', 'E', 'F'], values)).toEqual(new Set(['abcd', 'x'.repeat(40)]));
  });

  it.each([
    ['as is', secret],
    ['JSON-escaped', JSON.stringify(secret).slice(1, -1)],
    ['JSON-escaped with \\/', JSON.stringify(secret).slice(1, -1).replace(/\//g, '\\/')],
    ['JSON-escaped, ASCII only', JSON.stringify(secret).slice(1, -1).replace('é', '\\u00e9')],
    ['JSON-escaped, ASCII only, upper-case hex', JSON.stringify(secret).slice(1, -1).replace('é', '\\u00E9')],
    ['percent-encoded', encodeURIComponent(secret)],
    [
      'percent-encoded, lower-case hex',
      encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
    ],
    ['form-encoded', new URLSearchParams({ k: secret }).toString().slice(2)],
    ['base64', Buffer.from(secret).toString('base64')],
    ['base64url', Buffer.from(secret).toString('base64url')],
  ])('redacts the secret %s', (_, form) => {
    expect(redact({ [`k:${form}`]: [`<${form}>`] }, secrets)).toEqual({
      [`k:${REDACTED}`]: [expect.stringMatching(/^<\[redacted\][A-Za-z0-9+/=_-]{0,3}>$/)],
    });
  });

  it.each([0, 1, 2, 3, 4, 5])('redacts it inside a longer base64 text (%d bytes before it)', (before) => {
    const prefix = 'u:user'.slice(0, before);
    for (const encoding of ['base64', 'base64url'] as const) {
      const encoded = Buffer.from(`${prefix}${secret}!`).toString(encoding);
      const clean = redact(encoded, secrets);
      expect(clean).toContain(REDACTED);
      // What is left is at most the characters shared with the bytes around the secret.
      expect(clean.replace(REDACTED, '').length).toBeLessThanOrEqual(Math.ceil(((before + 1) * 8) / 6) + 4);
    }
  });

  it('every form of a secret is long enough not to match ordinary text', () => {
    for (const form of secretForms('abcd')) expect(form.length).toBeGreaterThanOrEqual(4);
  });

  it('leaves values shorter than 4 characters alone', () => {
    expect(redact('eu-1 x', new Set(['eu', '1', 'x']))).toBe('eu-1 x');
  });

  describe('redactedExcerpt', () => {
    it('redacts before it cuts: a cut inside the secret keeps no prefix of it', () => {
      for (let into = 1; into < secret.length; into++) {
        const text = `${'p'.repeat(100 - into)}${secret}tail`;
        const excerpt = redactedExcerpt(text, secrets, 100) as string;
        expect(excerpt).not.toContain(secret.slice(0, into));
        expect(excerpt.startsWith('p'.repeat(100 - into))).toBe(true);
      }
    });

    it('cuts before a marker it would split', () => {
      const text = `${'p'.repeat(95)}${secret}`;
      expect(redactedExcerpt(text, secrets, 100)).toBe(`${'p'.repeat(95)}…`);
      expect(redactedExcerpt(text, secrets, 105)).toBe(`${'p'.repeat(95)}${REDACTED}`);
    });

    it('writes an over-long object as redacted JSON, with no escaped form of the secret', () => {
      const data = { key: secret, filler: 'x'.repeat(200) };
      const excerpt = redactedExcerpt(data, secrets, 100) as string;
      expect(excerpt).toBe(`${JSON.stringify({ key: REDACTED, filler: 'x'.repeat(200) }).slice(0, 100)}…`);
      expect(redactedExcerpt({ key: secret }, secrets, 100)).toEqual({ key: REDACTED });
    });

    it('redacts a secret formed across two values once they are written as JSON', () => {
      const quoted = new Set(['ab","cd']);
      const excerpt = redactedExcerpt(['xab', 'cdx', 'y'.repeat(100)], quoted, 50) as string;
      expect(excerpt).not.toContain('ab","cd');
    });

    it('never leaves half a surrogate pair', () => {
      expect(redactedExcerpt(`${'a'.repeat(9)}😀`, secrets, 10)).toBe(`${'a'.repeat(9)}…`);
    });
  });
});
