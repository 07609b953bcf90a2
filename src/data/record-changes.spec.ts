import { mergeFields, storeValuesToFields } from './record-changes';

describe('storeValuesToFields', () => {
  it('unwraps data.<field> keys and the nested {data: {...}} form, keeping order', () => {
    expect(storeValuesToFields({ 'data.name': 'Ann', 'data.qty': 2 })).toEqual({ name: 'Ann', qty: 2 });
    expect(Object.keys(storeValuesToFields({ 'data.b': 1, 'data.a': 2 }))).toEqual(['b', 'a']);
    expect(storeValuesToFields({ data: { name: 'Ann', address: { city: 'Pécs' } } })).toEqual({
      name: 'Ann',
      address: { city: 'Pécs' },
    });
    expect(storeValuesToFields({ 'data.address.city': 'Pécs', plain: true })).toEqual({
      address: { city: 'Pécs' },
      plain: true,
    });
  });

  it('keeps a __proto__ key an own field, never the prototype', () => {
    const fields = storeValuesToFields(JSON.parse('{"data.__proto__": {"polluted": 1}}'));
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
    expect(Object.hasOwn(fields, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('mergeFields', () => {
  it('merges objects, replaces other values, keeps the order of known keys and appends new ones', () => {
    const merged = mergeFields(
      { name: 'Ann', address: { city: 'Pécs', zip: '7621' }, tags: ['a'], qty: 1 },
      { qty: 2, address: { city: 'Győr' }, tags: ['b'], note: null },
    );
    expect(merged).toEqual({
      name: 'Ann',
      address: { city: 'Győr', zip: '7621' },
      tags: ['b'],
      qty: 2,
      note: null,
    });
    expect(Object.keys(merged)).toEqual(['name', 'address', 'tags', 'qty', 'note']);
  });
});
