/** The rows of a raw `db.execute` result; both drivers (node-postgres and PGlite) put them in `rows`. */
export function rowsOf(result: unknown): Record<string, unknown>[] {
  return (result as { rows?: Record<string, unknown>[] }).rows ?? [];
}
