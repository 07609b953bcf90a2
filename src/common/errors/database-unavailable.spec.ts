import { DatabaseError } from 'pg';
import { isDatabaseError, isDatabaseUnavailable } from './database-unavailable';

function serverError(code: string, message: string): DatabaseError {
  const error = new DatabaseError(message, message.length, 'error');
  error.code = code;
  error.severity = 'ERROR';
  return error;
}

describe('isDatabaseUnavailable', () => {
  it('counts PgBouncer failures while PostgreSQL restarts behind it (class 08) as unavailable', () => {
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
    expect(isDatabaseError(unique)).toBe(true);
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
  });
});
