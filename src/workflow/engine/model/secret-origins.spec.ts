import { SecretOrigins } from './secret-origins';

describe('SecretOrigins', () => {
  const values = {
    CRM_TOKEN: 'crm-secret-value',
    BASE: 'https://base.example',
    SHORT: 'abc',
    NOWHERE: 'nowhere-value',
  };
  const origins = new SecretOrigins(
    ['CRM_TOKEN', 'BASE', 'SHORT', 'NOWHERE'],
    new Map([
      ['CRM_TOKEN', ['https://crm.example.com']],
      ['BASE', ['*']],
    ]),
    values,
  );

  it('lets a value go to an origin bound to it, a `*` value anywhere', () => {
    expect(
      origins.refusalOf({ url: 'https://crm.example.com/x?k=crm-secret-value', headers: {} }),
    ).toBeNull();
    expect(origins.refusalOf({ url: 'https://evil.example/x', headers: { base: values.BASE } })).toBeNull();
    expect(
      origins.refusalOf({ url: 'https://evil.example/x', headers: { a: 'plain' }, body: '{"a":1}' }),
    ).toBeNull();
  });

  it('refuses a value in the URL, a header (name or value) or the body, in any form redaction recognises', () => {
    const to = 'https://evil.example:8443';
    const refused = { name: 'CRM_TOKEN', origin: to };
    expect(origins.refusalOf({ url: `${to}/x?k=crm-secret-value` })).toEqual(refused);
    expect(
      origins.refusalOf({ url: `${to}/x`, headers: { Authorization: 'Bearer crm-secret-value' } }),
    ).toEqual(refused);
    expect(origins.refusalOf({ url: `${to}/x`, headers: { 'crm-secret-value': '1' } })).toEqual(refused);
    const basic = Buffer.from('user:crm-secret-value').toString('base64');
    expect(origins.refusalOf({ url: `${to}/x`, headers: { Authorization: `Basic ${basic}` } })).toEqual(
      refused,
    );
    expect(origins.refusalOf({ url: `${to}/x`, body: Buffer.from('{"k":"crm-secret-value"}') })).toEqual(
      refused,
    );
  });

  it('a name bound to no origin goes nowhere; values under 4 characters are no secrets; a URL that does not parse is left to the sender', () => {
    expect(origins.refusalOf({ url: 'https://crm.example.com/x', body: 'nowhere-value' })).toEqual({
      name: 'NOWHERE',
      origin: 'https://crm.example.com',
    });
    expect(origins.refusalOf({ url: 'https://evil.example/abc' })).toBeNull();
    expect(origins.refusalOf({ url: 'not a url crm-secret-value' })).toBeNull();
    expect(origins.allows('NOWHERE', 'https://crm.example.com')).toBe(false);
    expect(origins.boundTo('NOWHERE')).toEqual([]);
  });
});
