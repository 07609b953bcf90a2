import { inexactNumberPath, isInexactNumber } from './exact-numbers';

describe('exact JSON numbers', () => {
  it.each([
    ['1e400', true],
    ['-1e400', true],
    ['1e-400', true],
    ['123456789012345678901234567890', true],
    ['9007199254740993', true],
    ['9007199254740992', false],
    ['123456789012345680000', false],
    ['-1.2345e25', false],
    ['0.30000000000000001', true],
    ['12345678901234567.5', true],
    ['9007199254740991', false],
    ['-9007199254740991', false],
    ['0.1', false],
    ['1.50', false],
    ['1e21', false],
    ['1.5E-7', false],
    ['0', false],
    ['-0.000000000000001234', false],
    ['123456789012345.6', false],
  ])('%s inexact: %s', (token, expected) => {
    expect(isInexactNumber(token)).toBe(expected);
  });

  it('names the path of the first inexact number, skipping strings and keys that look like numbers', () => {
    expect(inexactNumberPath('{"a":1,"b":"1e400","1e400":2}')).toBeNull();
    expect(inexactNumberPath('{"a": {"b" : [1, "x,y", 0.30000000000000001]}}')).toBe('a.b.2');
    expect(inexactNumberPath('{"k\\"1e5":[{"x":[]},{"y\\\\":1e999}]}')).toBe('k"1e5.1.y\\');
    expect(inexactNumberPath('1e400')).toBe('');
    expect(inexactNumberPath('[1,2,3]')).toBeNull();
  });

  it('finds an exponent after every character a JSON number may follow, and not inside a UUID', () => {
    expect(inexactNumberPath('[1e400]')).toBe('0');
    expect(inexactNumberPath('{"a":-1.5e400}')).toBe('a');
    expect(inexactNumberPath('{"a":\n\t 2E+999}')).toBe('a');
    expect(inexactNumberPath('{"a":[1,1e-400]}')).toBe('a.1');
    expect(inexactNumberPath('-1e400')).toBe('');
    expect(inexactNumberPath('{"id":"5b3e4f10-13e5-4d2e-9e1a-77e3e8b0c1d2","n":1.5e3}')).toBeNull();
  });
});
