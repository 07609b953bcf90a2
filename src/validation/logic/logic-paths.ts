import { isAllowedSegment } from '../../common/validation/field-path';

/**
 * Why a dotted data path (`address.city`, `items.0.qty`) in a rule is refused, or null: every
 * segment must pass the shared whitelist, so relative (`../x`), escaped (`a\\.b`) and slashed
 * paths are refused along with prototype names.
 */
export function dottedPathProblem(path: string): string | null {
  if (path === '') return null;
  if (path.length > 200 || !path.split('.').every(isAllowedSegment))
    return `the path "${path.slice(0, 100)}" is not allowed`;
  return null;
}
