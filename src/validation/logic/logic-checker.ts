import { LOGIC_LIMITS } from './logic-limits';
import { isAllowedOperator } from './logic-operators';
import { isAllowedSegment } from '../../common/validation/field-path';
import { dottedPathProblem } from './logic-paths';

interface Pending {
  node: unknown;
  where: string;
  depth: number;
}

/**
 * Explains why a JSONLogic value may not be stored, or returns null. Walks the rule iteratively
 * (a rule nested thousands deep is a 422, not a stack overflow), bounds its depth and size, allows
 * only the captured operators and checks every argument position of every path operator: paths
 * are literal, own-data names; nothing dynamic, relative or through a prototype.
 *
 * The one checker for every JSONLogic the service accepts: validation rules, computed rules and
 * workflow conditions.
 */
export function logicProblem(root: unknown, where: string): string | null {
  const stack: Pending[] = [{ node: root, where, depth: 0 }];
  let nodes = 0;
  while (stack.length > 0) {
    const { node, where: at, depth } = stack.pop()!;
    if (++nodes > LOGIC_LIMITS.maxNodes) return `${where} has more than ${LOGIC_LIMITS.maxNodes} parts`;
    if (depth > LOGIC_LIMITS.maxDepth) return `${at} is nested deeper than ${LOGIC_LIMITS.maxDepth} levels`;
    if (node === null || typeof node === 'number' || typeof node === 'boolean') continue;
    if (typeof node === 'string') {
      if (node.length > LOGIC_LIMITS.maxStringLength) return `${at} is a string longer than the limit`;
      continue;
    }
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--)
        stack.push({ node: node[i], where: `${at}[${i}]`, depth: depth + 1 });
      continue;
    }
    if (typeof node !== 'object') return `${at} is not JSON`;
    const keys = Object.keys(node);
    if (keys.length !== 1) return `${at} must have exactly one operator (has ${keys.length})`;
    const operator = keys[0];
    if (!isAllowedOperator(operator)) return `${at} uses the unknown operator "${operator.slice(0, 50)}"`;
    const args = (node as Record<string, unknown>)[operator];
    const inner = `${at}.${operator}`;
    const problem = pathArgumentsProblem(operator, args, inner);
    if (problem) return problem;
    for (const child of logicArguments(operator, args))
      stack.push({ node: child, where: inner, depth: depth + 1 });
  }
  return null;
}

/** The arguments of an operator that are themselves logic (paths are checked, not walked). */
function logicArguments(operator: string, args: unknown): unknown[] {
  const list = Array.isArray(args) ? args : [args];
  switch (operator) {
    case 'var':
      return list.slice(1); // the default value
    case 'get':
      return [list[0], ...list.slice(2)]; // the object and the default
    case 'val':
    case 'exists':
    case 'missing':
    case 'missing_some':
      return [];
    default:
      return Array.isArray(args) ? args : [args];
  }
}

function pathArgumentsProblem(operator: string, args: unknown, where: string): string | null {
  const list = Array.isArray(args) ? args : [args];
  const literalPath = (value: unknown): string | null => {
    if (value === null || value === undefined || typeof value === 'number') return null;
    if (typeof value !== 'string') return `${where}: the path must be a literal string`;
    return dottedPathProblem(value);
  };
  switch (operator) {
    case 'var':
      if (list.length > 2) return `${where} takes a path and a default value`;
      return literalPath(list[0]);
    case 'get':
      if (list.length < 2 || list.length > 3) return `${where} takes an object, a path and a default value`;
      return literalPath(list[1]);
    case 'missing':
      for (const path of list) {
        const problem =
          typeof path === 'string' ? dottedPathProblem(path) : `${where}: paths must be literal strings`;
        if (problem) return problem;
      }
      return null;
    case 'missing_some': {
      const [minimum, paths] = list;
      if (typeof minimum !== 'number' || !Array.isArray(paths))
        return `${where} takes a number and a list of paths`;
      return pathArgumentsProblem('missing', paths, where);
    }
    case 'val':
    case 'exists':
      return segmentListProblem(list, where);
    default:
      return null;
  }
}

/** `val` and `exists` take literal segments; `val` may start with `[n]`, a scope level inside an iterator. */
function segmentListProblem(list: unknown[], where: string): string | null {
  for (let i = 0; i < list.length; i++) {
    const segment = list[i];
    if (typeof segment === 'number') continue;
    if (i === 0 && Array.isArray(segment) && segment.length === 1 && Number.isInteger(segment[0])) continue;
    if (typeof segment !== 'string') return `${where}: path segments must be literal strings`;
    if (segment !== '' && !isAllowedSegment(segment))
      return `${where}: the path segment "${segment.slice(0, 100)}" is not allowed`;
  }
  return null;
}
