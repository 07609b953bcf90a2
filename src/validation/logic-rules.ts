import { LogicEngine } from 'json-logic-engine';

/** Operators a rule may use: the engine's own, minus control flow that throws by design. */
const FORBIDDEN_OPERATORS = new Set(['throw', 'try']);
const PATH_OPERATORS = new Set(['var', 'val', 'get', 'missing', 'missing_some', 'exists']);
const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'prototype', 'constructor']);

export const logicEngine = new LogicEngine();

export type CompiledLogic = (data: Record<string, unknown>) => unknown;

/**
 * Explains why a JSONLogic value is not acceptable, or returns null. Besides the shape, it refuses
 * paths through prototypes and dynamic paths, so a rule can never read `constructor.name` & co.
 */
export function logicProblem(node: unknown, where: string): string | null {
  if (node === null || ['string', 'number', 'boolean'].includes(typeof node)) return null;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const problem = logicProblem(node[i], `${where}[${i}]`);
      if (problem) return problem;
    }
    return null;
  }
  if (typeof node !== 'object') return `${where} is not JSON`;
  const keys = Object.keys(node);
  if (keys.length !== 1) return `${where} must have exactly one operator (has ${keys.length})`;
  const operator = keys[0];
  if (!(operator in logicEngine.methods) || FORBIDDEN_OPERATORS.has(operator)) {
    return `${where} uses the unknown operator "${operator}"`;
  }
  const args = (node as Record<string, unknown>)[operator];
  if (PATH_OPERATORS.has(operator)) {
    const paths = (Array.isArray(args) ? args : [args]).slice(0, operator === 'var' ? 1 : undefined);
    for (const path of paths.flat()) {
      if (path === null || typeof path === 'number') continue;
      if (typeof path !== 'string') return `${where}: the path of "${operator}" must be a literal string`;
      if (path.split('.').some((segment) => FORBIDDEN_SEGMENTS.has(segment))) {
        return `${where}: the path "${path}" is not allowed`;
      }
    }
    if (operator === 'var' && Array.isArray(args) && args.length > 1)
      return logicProblem(args[1], `${where}.default`);
    return null;
  }
  return logicProblem(args, `${where}.${operator}`);
}

/** Compiles a checked rule into a function; never throws at run time (a failing rule yields undefined). */
export function compileLogic(node: unknown): CompiledLogic {
  const compiled = logicEngine.build(node) as (data: unknown) => unknown;
  return (data) => {
    try {
      return compiled(data);
    } catch {
      return undefined;
    }
  };
}
