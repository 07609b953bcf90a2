import { evaluateLogic, LogicBudget, logicProblem } from '../../../validation/logic';
import { parseContextPath, readSegments } from './context-path';
import { asText } from './template';

export type StepCondition = string | Record<string, unknown>;

type Parsed =
  | { kind: 'truthy'; segments: string[]; negate: boolean }
  | { kind: 'exists'; segments: string[] }
  | { kind: 'equals'; segments: string[]; value: string; negate: boolean }
  | { kind: 'logic'; rule: unknown };

function parse(condition: StepCondition): Parsed | { problem: string } {
  if (typeof condition !== 'string') {
    const problem = logicProblem(condition, 'condition');
    return problem ? { problem } : { kind: 'logic', rule: condition };
  }
  const text = condition.trim();
  for (const [operator, negate] of [
    ['.notEquals.', true],
    ['.equals.', false],
  ] as const) {
    const at = text.indexOf(operator);
    if (at > 0) {
      const path = parseContextPath(text.slice(0, at));
      if ('problem' in path) return path;
      return { kind: 'equals', segments: path.segments, value: text.slice(at + operator.length), negate };
    }
  }
  const negate = text.startsWith('!');
  const path = parseContextPath(negate ? text.slice(1) : text);
  if ('problem' in path) return path;
  if (path.segments[0] === 'env') return { problem: 'conditions cannot read env' };
  // `savedData.exists`: met when savedData is there, unless the data has its own `exists`.
  if (!negate && path.segments.length > 1 && path.segments.at(-1) === 'exists')
    return { kind: 'exists', segments: path.segments };
  return { kind: 'truthy', segments: path.segments, negate };
}

/** Why a condition may not be saved, or null. */
export function conditionProblem(condition: unknown): string | null {
  if (
    typeof condition !== 'string' &&
    (condition === null || typeof condition !== 'object' || Array.isArray(condition))
  )
    return 'a condition is a dotted path or a JSONLogic object';
  if (typeof condition === 'string' && (condition.trim() === '' || condition.length > 500))
    return 'a condition must be a dotted path of at most 500 characters';
  const parsed = parse(condition as StepCondition);
  return 'problem' in parsed ? parsed.problem : null;
}

function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return Boolean(value);
}

function equalsText(actual: unknown, expected: string): boolean {
  if (actual === undefined) return false;
  return (actual === null ? 'null' : asText(actual)) === expected;
}

/**
 * Whether a step's condition is met: a bare path (truthy), `!path`, `path.equals.value`,
 * `path.notEquals.value` (compared as text), `<path>.exists`, or a JSONLogic object on the scope.
 */
export function conditionMet(condition: StepCondition, scope: Record<string, unknown>): boolean {
  const parsed = parse(condition);
  if ('problem' in parsed) return false;
  const read = (segments: string[]) => readSegments(scope, segments);
  switch (parsed.kind) {
    case 'logic':
      return truthy(evaluateLogic(parsed.rule, scope, new LogicBudget()));
    case 'exists': {
      const own = read(parsed.segments);
      if (own !== undefined) return truthy(own);
      const parent = read(parsed.segments.slice(0, -1));
      return parent !== undefined && parent !== null;
    }
    case 'equals':
      return equalsText(read(parsed.segments), parsed.value) !== parsed.negate;
    case 'truthy':
      return truthy(read(parsed.segments)) !== parsed.negate;
  }
}
