import { logicProblem } from './logic-checker';
import { ALLOWED_OPERATORS } from './logic-operators';

function nested(depth: number): unknown {
  let node: unknown = 1;
  for (let i = 0; i < depth; i++) node = { '!': [node] };
  return node;
}

describe('logicProblem', () => {
  it.each<[string, unknown]>([
    ['a comparison', { '>=': [{ var: 'age' }, 18] }],
    ['a var with a default', { var: ['qty', 0] }],
    ['a nested path', { var: 'address.city' }],
    ['an index path', { var: 'items.0.qty' }],
    ['the whole item inside an iterator', { all: [{ var: 'items' }, { '>': [{ var: '' }, 0] }] }],
    [
      'an outer scope through val',
      { all: [{ var: 'items' }, { '<': [{ var: '' }, { val: [[2], 'max'] }] }] },
    ],
    ['get with a literal path', { get: [{ var: 'address' }, 'city', 'none'] }],
    ['missing', { missing: ['a', 'b.c'] }],
    ['missing_some', { missing_some: [1, ['a', 'b']] }],
    ['literals', [1, 'two', true, null]],
    ['a rule 32 levels deep', nested(31)],
  ])('accepts %s', (_, rule) => {
    expect(logicProblem(rule, 'rule')).toBeNull();
  });

  it.each<[string, unknown, RegExp]>([
    ['an inherited operator: constructor', { constructor: [1] }, /unknown operator "constructor"/],
    ['an inherited operator: toString', { toString: [] }, /unknown operator "toString"/],
    ['an inherited operator: __defineGetter__', { __defineGetter__: ['x', 1] }, /unknown operator/],
    ['an inherited operator: hasOwnProperty', { hasOwnProperty: ['x'] }, /unknown operator/],
    ['an inherited operator: valueOf', { valueOf: [] }, /unknown operator/],
    ['crafted source as an operator', { 'a)||process.exit(1)||(': [1] }, /unknown operator/],
    ['throw', { throw: 'x' }, /unknown operator "throw"/],
    ['try', { try: [1, 2] }, /unknown operator "try"/],
    ['preserve', { preserve: { a: 1 } }, /unknown operator "preserve"/],
    ['eachKey', { eachKey: { a: 1 } }, /unknown operator "eachKey"/],
    ['two operators in one object', { var: 'a', '+': [1] }, /exactly one operator/],
    ['a prototype path', { var: '__proto__' }, /not allowed/],
    ['a prototype path deeper', { var: 'a.constructor.name' }, /not allowed/],
    ['a relative path', { map: [{ var: 'items' }, { var: '../__proto__' }] }, /not allowed/],
    ['an escaped path', { var: 'a\\.b' }, /not allowed/],
    ['a slashed path', { var: 'a/b' }, /not allowed/],
    ['a dynamic path', { var: { cat: ['__pro', 'to__'] } }, /literal string/],
    ['a dynamic default path', { var: ['a', { var: '__proto__' }] }, /not allowed/],
    ['a third var argument', { var: ['a', 1, { var: '__proto__' }] }, /path and a default/],
    ['val through a prototype', { val: ['a', '__proto__'] }, /not allowed/],
    ['val with a dynamic segment', { val: [{ var: 'x' }] }, /literal strings/],
    [
      'val in an outer scope through a prototype',
      { map: [{ var: 'i' }, { val: [[1], 'constructor'] }] },
      /not allowed/,
    ],
    ['get through a prototype', { get: [{ var: 'a' }, '__proto__'] }, /not allowed/],
    ['get with a dynamic path', { get: [{ var: 'a' }, { var: 'b' }] }, /literal string/],
    ['missing through a prototype', { missing: ['__proto__'] }, /not allowed/],
    ['missing with a dynamic list', { missing: { merge: [['a']] } }, /literal strings/],
    ['missing_some through a prototype', { missing_some: [1, ['constructor']] }, /not allowed/],
    ['exists through a prototype', { exists: ['__proto__'] }, /not allowed/],
    ['a rule 40 levels deep', nested(40), /deeper than 32/],
    ['a rule 100,000 levels deep (no stack overflow)', nested(100_000), /deeper than 32/],
    [
      'a rule with more than 1000 parts',
      { '+': Array.from({ length: 1001 }, () => 1) },
      /more than 1000 parts/,
    ],
  ])('refuses %s', (_, rule, message) => {
    expect(logicProblem(rule, 'rule')).toMatch(message);
  });

  it('allows only own methods of the engine, none of Object.prototype', () => {
    for (const name of Object.getOwnPropertyNames(Object.prototype))
      expect(ALLOWED_OPERATORS.has(name)).toBe(false);
    expect([...ALLOWED_OPERATORS]).toEqual(
      expect.arrayContaining(['var', 'if', 'all', 'reduce', 'merge', '==']),
    );
  });
});
