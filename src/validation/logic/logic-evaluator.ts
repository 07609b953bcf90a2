import { LogicEngine } from 'json-logic-engine';
import { LOGIC_LIMITS } from './logic-limits';
import { ALLOWED_OPERATORS } from './logic-operators';

/** Thrown when a submission makes its rules exceed an evaluation limit (a 400 for the client). */
export class LogicLimitExceeded extends Error {
  constructor(readonly limit: keyof typeof LOGIC_LIMITS) {
    super(`JSONLogic evaluation exceeded ${limit} (${LOGIC_LIMITS[limit]})`);
    this.name = 'LogicLimitExceeded';
  }
}

/** Thrown when a rule cannot be evaluated on the data (wrong argument types, a Promise result). */
export class LogicEvaluationFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LogicEvaluationFailed';
  }
}

/**
 * The work one submission's rules may still do, shared by every rule evaluated for it. An operator
 * costs one unit plus the length of every array or string it takes or returns, so reading a large
 * array inside an iteration over another one (quadratic work) or copying one repeatedly runs out
 * long before it blocks the event loop or fills memory.
 */
export class LogicBudget {
  private spent = 0;

  constructor(private readonly maxWork: number = LOGIC_LIMITS.maxWork) {}

  spend(units: number): void {
    this.spent += units;
    if (this.spent > this.maxWork) throw new LogicLimitExceeded('maxWork');
  }
}

type Method = (...args: unknown[]) => unknown;
type MethodObject = { method: Method; [key: string | symbol]: unknown };

// Evaluation is synchronous, so the budget of the evaluation in progress can live here.
let current: LogicBudget | null = null;

function checkSize(value: unknown): unknown {
  if (typeof value === 'string' && value.length > LOGIC_LIMITS.maxStringLength)
    throw new LogicLimitExceeded('maxStringLength');
  if (Array.isArray(value) && value.length > LOGIC_LIMITS.maxArrayLength)
    throw new LogicLimitExceeded('maxArrayLength');
  return value;
}

function sizeOf(value: unknown): number {
  return Array.isArray(value) || typeof value === 'string' ? value.length : 0;
}

// Their arguments are paths, not data: reading costs what it returns.
const PATH_OPERATORS = new Set(['var', 'val', 'get', 'exists', 'missing', 'missing_some']);

function metered(method: Method, countInput: boolean): Method {
  return function meteredMethod(this: unknown, ...args: unknown[]) {
    // A lazy operator gets its arguments as logic: their work is metered when they are evaluated.
    const input = args[0];
    let units = 1;
    if (countInput)
      units += Array.isArray(input)
        ? input.reduce<number>((sum, arg) => sum + sizeOf(arg), 0)
        : sizeOf(input);
    current?.spend(units);
    const result = checkSize(method.apply(this, args));
    current?.spend(sizeOf(result));
    return result;
  };
}

/**
 * The interpreter (`run()`, never `build()`: no rule ever becomes JavaScript source) with the
 * allowed operators only, each metered against the budget and checked for oversized results, and
 * its methods frozen so no rule can change them. Interpreted optimisation is off so every operator
 * call, also inside iterators, goes through the metered methods.
 */
function createEngine(): LogicEngine {
  const engine = new LogicEngine(undefined, {
    disableInterpretedOptimization: true,
    maxDepth: LOGIC_LIMITS.maxDepth,
    maxArrayLength: LOGIC_LIMITS.maxArrayLength,
    maxStringLength: LOGIC_LIMITS.maxStringLength,
  });
  const methods = engine.methods as Record<string, Method | MethodObject>;
  const allowed: Record<string, Method | MethodObject> = Object.create(null) as Record<
    string,
    Method | MethodObject
  >;
  for (const name of ALLOWED_OPERATORS) {
    const original = methods[name];
    if (typeof original === 'function') {
      allowed[name] = metered(original, !PATH_OPERATORS.has(name));
    } else {
      const copy: MethodObject = {
        ...original,
        method: metered(original.method, original.lazy !== true && !PATH_OPERATORS.has(name)),
      };
      for (const symbol of Object.getOwnPropertySymbols(original)) copy[symbol] = original[symbol];
      delete copy.asyncMethod;
      delete copy.compile;
      allowed[name] = Object.freeze(copy);
    }
  }
  engine.methods = Object.freeze(allowed) as typeof engine.methods;
  return engine;
}

const engine = createEngine();

/**
 * Evaluates a rule that passed `logicProblem` on the data, spending from the budget. Throws
 * `LogicLimitExceeded` when a limit is hit and `LogicEvaluationFailed` when the rule cannot be
 * evaluated on this data.
 */
export function evaluateLogic(rule: unknown, data: unknown, budget: LogicBudget): unknown {
  const outer = current;
  current = budget;
  try {
    const result = checkSize(engine.run(rule, data));
    if (result instanceof Promise || (typeof result === 'object' && result !== null && 'then' in result)) {
      (result as Promise<unknown>).catch?.(() => undefined);
      throw new LogicEvaluationFailed('the rule did not evaluate synchronously');
    }
    return result;
  } catch (error) {
    if (error instanceof LogicLimitExceeded || error instanceof LogicEvaluationFailed) throw error;
    if (error instanceof RangeError) throw new LogicLimitExceeded('maxDepth');
    throw new LogicEvaluationFailed(describe(error));
  } finally {
    current = outer;
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (error && typeof error === 'object' && 'type' in error) return String(error.type);
  return 'the rule could not be evaluated';
}
