import { isAllowedSegment } from '../../../common/validation/field-path';

/** The roots a template or condition may read (docs/design.md section 6). */
export const SCOPE_ROOTS = [
  'input',
  'savedData',
  'validationResult',
  'computedResults',
  'results',
  'user',
  'formTitle',
  'workflowName',
  'env',
  // A compensating request reads the result of the step it undoes (`{{result.data.id}}`).
  'result',
] as const;

const ROOTS: ReadonlySet<string> = new Set(SCOPE_ROOTS);
const MAX_SEGMENTS = 12;
const PROVIDED_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/** Splits `savedData.data.city` into checked segments, or explains why it may not be read. */
export function parseContextPath(path: string): { segments: string[] } | { problem: string } {
  const segments = path.split('.');
  // Besides the built-in roots, a name a step provides (`StepOutcome.provides` is open to any name).
  if (!ROOTS.has(segments[0]) && !PROVIDED_NAME.test(segments[0]))
    return {
      problem: `"${path.slice(0, 100)}" must start with one of ${SCOPE_ROOTS.join(', ')} or a name a step provides`,
    };
  if (segments.length > MAX_SEGMENTS) return { problem: `"${path.slice(0, 100)}" is too deep` };
  if (!segments.every(isAllowedSegment))
    return { problem: `the path "${path.slice(0, 100)}" is not allowed` };
  return { segments };
}

/** Reads own properties only (never a prototype); undefined when any step is missing. */
export function readSegments(root: unknown, segments: readonly string[]): unknown {
  let value = root;
  for (const segment of segments) {
    if (value === null || typeof value !== 'object') return undefined;
    if (!Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}
