/** Parameters that put a list request in the grid-library form (docs/grid-protocol.md section 2). */
const GRID_PARAMETERS = [
  'skip',
  'take',
  'filter',
  'sort',
  'group',
  'totalSummary',
  'groupSummary',
  'requireTotalCount',
  'requireGroupCount',
];

export function isGridRequest(query: Record<string, unknown>): boolean {
  return GRID_PARAMETERS.some((name) => Object.prototype.hasOwnProperty.call(query, name));
}
