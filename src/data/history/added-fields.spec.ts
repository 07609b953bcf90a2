import { addedFieldsJson } from './record-history.repository';

describe('addedFieldsJson', () => {
  it('wraps each field as `after`, keeping what JSON.stringify keeps of the data', () => {
    const data = {
      name: 'Ann',
      gone: undefined,
      when: new Date('2026-01-02T03:04:05.000Z'),
      list: [1, null],
    };
    expect(JSON.parse(addedFieldsJson(data))).toEqual({
      name: { after: 'Ann' },
      when: { after: '2026-01-02T03:04:05.000Z' },
      list: { after: [1, null] },
    });
    // Exactly the fields of the data as stored.
    expect(Object.keys(JSON.parse(addedFieldsJson(data)))).toEqual(
      Object.keys(JSON.parse(JSON.stringify(data))),
    );
  });

  it('keeps a field named __proto__ a field', () => {
    const data = JSON.parse('{"__proto__": {"polluted": 1}, "a": 1}') as Record<string, unknown>;
    expect(addedFieldsJson(data)).toBe('{"__proto__":{"after":{"polluted":1}},"a":{"after":1}}');
  });

  it('is an empty document for empty data', () => {
    expect(addedFieldsJson({})).toBe('{}');
  });
});
