import { DatabaseError } from 'pg';
import { isDatabaseError, isDatabaseUnavailable } from './database-unavailable';

function serverError(code: string, message: string): DatabaseError {
  const error = new DatabaseError(message, message.length, 'error');
  error.code = code;
  error.severity = 'ERROR';
  return error;
}

describe('isDatabaseUnavailable', () => {
  it('counts PgBouncer failures while PostgreSQL restarts behind it (its 08P01) and class-08 connection failures as unavailable', () => {
    const pooler = serverError(
      '08P01',
      'server login has been failing, try again later (server_login_retry)',
    );
    expect(isDatabaseUnavailable(pooler)).toBe(true);
    // as drizzle wraps it
    expect(isDatabaseUnavailable(Object.assign(new Error('Failed query: select 1'), { cause: pooler }))).toBe(
      true,
    );
    expect(isDatabaseUnavailable(serverError('08006', 'connection failure'))).toBe(true);
    expect(
      isDatabaseUnavailable(serverError('57P01', 'terminating connection due to administrator command')),
    ).toBe(true);
  });

  it('keeps statement errors apart: they are database errors, not an outage', () => {
    const unique = serverError('23505', 'duplicate key value violates unique constraint');
    expect(isDatabaseUnavailable(unique)).toBe(false);
    // PostgreSQL's own 08P01 is a malformed statement: a bug
    const protocol = serverError(
      '08P01',
      'bind message supplies 1 parameters, but prepared statement requires 2',
    );
    expect(isDatabaseUnavailable(protocol)).toBe(false);
    expect(isDatabaseError(protocol)).toBe(true);
    expect(isDatabaseError(unique)).toBe(true);
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
  });
});
