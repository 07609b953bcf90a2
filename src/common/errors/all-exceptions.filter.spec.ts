import { HttpException, NotFoundException } from '@nestjs/common';
import { ThrottlerException } from '@nestjs/throttler';
import { AppError } from './app-error';
import { framesOf, toAppError } from './all-exceptions.filter';

describe('toAppError', () => {
  it('keeps AppErrors as they are', () => {
    const error = new AppError('DATA_SAVE_LIMIT_REACHED', { params: { limit: 1 } });
    expect(toAppError(error)).toBe(error);
  });

  it('turns an unexpected error into a 500 INTERNAL_ERROR (a bug), never exposing its message', () => {
    const mapped = toAppError(new TypeError('cannot read properties of undefined'));
    expect(mapped.code).toBe('INTERNAL_ERROR');
    expect(mapped.status).toBe(500);
    expect(mapped.messageKey).toBe('errors.INTERNAL_ERROR');
  });

  it('maps framework exceptions by status', () => {
    expect(toAppError(new NotFoundException()).code).toBe('ROUTE_NOT_FOUND');
    expect(toAppError(new ThrottlerException()).code).toBe('RATE_LIMITED');
    expect(toAppError(new HttpException('too large', 413)).code).toBe('PAYLOAD_TOO_LARGE');
    expect(
      toAppError(
        new HttpException("Body is not valid JSON but content-type is set to 'application/json'", 400),
      ).code,
    ).toBe('INVALID_JSON');
  });

  it('recognises an unreachable database (wrapped or not) as 503', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(toAppError(refused).status).toBe(503);
    expect(toAppError(new Error('Failed query', { cause: refused })).code).toBe('DATABASE_UNAVAILABLE');
    expect(toAppError(Object.assign(new Error('terminating connection'), { code: '57P01' })).status).toBe(
      503,
    );
  });

  it('gives a development stack as the error name and frames only, never the message (SQL, parameters)', () => {
    const error = new Error(
      'Failed query: insert into "users" ("email") values ($1)\nparams: secret@example.com',
    );
    const frames = framesOf(error)!;
    expect(frames.startsWith('Error\n    at ')).toBe(true);
    expect(frames).not.toContain('insert into');
    expect(frames).not.toContain('secret@example.com');
    // A message changed after the stack was taken is not guessed at.
    error.message = 'changed';
    expect(framesOf(error)).toBeUndefined();
    expect(framesOf('not an error')).toBeUndefined();
  });
});
