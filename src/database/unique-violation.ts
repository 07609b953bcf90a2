/**
 * True when the error (or one it wraps: drizzle wraps the driver's error in `cause`) is a unique
 * violation (SQLSTATE 23505), on `constraint` when given. Both drivers report the index name.
 * Repositories turn it into an outcome ("e-mail taken"), so a race between two writes of one
 * unique value ends in one success and one 409, never a 500.
 */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  let current = error as { code?: unknown; constraint?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; current && depth < 5; depth++) {
    if (current.code === '23505') return constraint === undefined || current.constraint === constraint;
    current = current.cause as typeof current;
  }
  return false;
}
