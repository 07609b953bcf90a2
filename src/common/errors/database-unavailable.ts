const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '08000', // connection_exception
  '08001', // sqlclient_unable_to_establish_sqlconnection
  '08003', // connection_does_not_exist
  '08004', // sqlserver_rejected_establishment_of_sqlconnection
  '08006', // connection_failure
]);
/**
 * PgBouncer answers its own failures with 08P01 (protocol_violation) while PostgreSQL restarts behind
 * it; PostgreSQL itself uses 08P01 for malformed protocol messages, which are bugs, not an outage, so
 * only PgBouncer's texts count.
 */
const POOLER_FAILURE =
  /server login has been failing|server conn crashed|query_wait_timeout|no more connections allowed|pgbouncer cannot connect to server|server shutting down/i;

const CONNECTION_ERROR_MESSAGES = [
  /Connection terminated/i,
  /PGlite is closed/i,
  /Client has encountered a connection error/i,
  /server closed the connection unexpectedly/i,
];

/** True when the error (or one it wraps) says the database cannot be reached, which is a 503, not a bug. */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: any = error;
  for (let depth = 0; current && depth < 5; depth++) {
    if (typeof current.code === 'string' && CONNECTION_ERROR_CODES.has(current.code)) return true;
    if (
      current.code === '08P01' &&
      typeof current.message === 'string' &&
      POOLER_FAILURE.test(current.message)
    )
      return true;
    if (
      typeof current.message === 'string' &&
      CONNECTION_ERROR_MESSAGES.some((re) => re.test(current.message))
    )
      return true;
    if (
      Array.isArray(current.errors) &&
      current.errors.some((inner: unknown) => isDatabaseUnavailable(inner))
    )
      return true;
    current = current.cause;
  }
  return false;
}

/** True when a database query failed (unreachable, or the server refused the statement). */
export function isDatabaseError(error: unknown): boolean {
  if (isDatabaseUnavailable(error)) return true;
  for (let current: any = error, depth = 0; current && depth < 5; depth++, current = current.cause) {
    if (current.name === 'DrizzleQueryError') return true;
    if (typeof current.severity === 'string' && /^[0-9A-Z]{5}$/.test(String(current.code))) return true;
  }
  return false;
}
