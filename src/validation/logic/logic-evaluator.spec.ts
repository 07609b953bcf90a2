import { evaluateLogic, LogicBudget, LogicEvaluationFailed, LogicLimitExceeded } from './logic-evaluator';

const run = (rule: unknown, data: unknown) => evaluateLogic(rule, data, new LogicBudget());
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('evaluateLogic', () => {
  it('evaluates ordinary form rules', () => {
    expect(run({ '>=': [{ var: 'age' }, 18] }, { age: 20 })).toBe(true);
    expect(run({ '*': [{ var: 'qty' }, { var: 'price' }] }, { qty: 3, price: 2.5 })).toBe(7.5);
    expect(
      run({ all: [{ var: 'items' }, { '>': [{ var: 'qty' }, 0] }] }, { items: [{ qty: 1 }, { qty: 2 }] }),
    ).toBe(true);
    expect(
      run(
        { reduce: [{ var: 'items' }, { '+': [{ var: 'accumulator' }, { var: 'current' }] }, 0] },
        { items: range(10_000) },
      ),
    ).toBe(49_995_000);
    expect(run({ missing: ['a', 'b'] }, { a: 1 })).toEqual(['b']);
  });

  it('cannot reach prototypes through the data either', () => {
    expect(run({ var: 'toString' }, {})).toBeNull();
  });

  it('knows no inherited operator even when the checker is bypassed', () => {
    for (const operator of ['constructor', '__defineGetter__', 'hasOwnProperty', 'toString'])
      expect(() => run({ [operator]: ['x', 1] }, {})).toThrow(LogicEvaluationFailed);
    expect(run({ var: 'x' }, { x: 1 })).toBe(1);
  });

  it.each<[string, unknown, unknown, string]>([
    [
      'quadratic all inside all over a submitted array',
      { all: [{ var: 'items' }, { all: [{ val: [[2], 'items'] }, { '>=': [{ var: '' }, 0] }] }] },
      { items: range(10_000) },
      'maxWork',
    ],
    [
      'a merge of the outer array for every element',
      { map: [{ var: 'items' }, { merge: [{ val: [[2], 'items'] }] }] },
      { items: range(10_000) },
      'maxWork',
    ],
    [
      'a reduce that doubles its accumulator',
      { reduce: [{ var: 'items' }, { merge: [{ var: 'accumulator' }, { var: 'accumulator' }] }, [1]] },
      { items: range(40) },
      'maxArrayLength',
    ],
    [
      'a reduce that doubles a string',
      { reduce: [{ var: 'items' }, { cat: [{ var: 'accumulator' }, { var: 'accumulator' }] }, 'ab'] },
      { items: range(40) },
      'maxWork',
    ],
    [
      'an array over the iteration limit',
      { map: [{ var: 'items' }, 1] },
      { items: range(30_000) },
      'maxArrayLength',
    ],
  ])('stops %s with a limit error', (_, rule, data, limit) => {
    let error: unknown;
    try {
      run(rule, data);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(LogicLimitExceeded);
    expect((error as LogicLimitExceeded).limit).toBe(limit);
  });

  it('shares one budget across the rules of a submission', () => {
    const budget = new LogicBudget(1000);
    const rule = { all: [{ var: 'items' }, { '>=': [{ var: '' }, 0] }] };
    expect(evaluateLogic(rule, { items: range(200) }, budget)).toBe(true);
    expect(() => evaluateLogic(rule, { items: range(200) }, budget)).toThrow(LogicLimitExceeded);
  });

  it('reports a rule that does not fit the data as an evaluation failure', () => {
    expect(() => run({ all: 5 }, {})).toThrow(LogicEvaluationFailed);
  });
});
