import { AppError } from '../../../common/errors/app-error';
import { StepError } from '../../sdk/step-error';
import { toStepFailure } from './step-failure';

const translate = (error: AppError) => `message of ${error.code}`;

describe('toStepFailure: a run record gets a stable code and a short message, never driver text', () => {
  it('a driver error (SQL in its message) becomes DATABASE_ERROR with the short message', () => {
    const driver = Object.assign(new Error('relation "x" does not exist: select * from x where ...'), {
      code: '42P01',
      severity: 'ERROR',
    });
    expect(toStepFailure(new Error('Failed query: select 1', { cause: driver }), translate)).toEqual({
      code: 'DATABASE_ERROR',
      message: 'message of DATABASE_ERROR',
      retryable: false,
    });
  });

  it('an unreachable database is DATABASE_UNAVAILABLE and retryable; a bug is STEP_FAILED', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(toStepFailure(refused, translate)).toMatchObject({
      code: 'DATABASE_UNAVAILABLE',
      retryable: true,
    });
    expect(
      toStepFailure(new TypeError("Cannot read properties of undefined (reading 'x')"), translate),
    ).toEqual({
      code: 'STEP_FAILED',
      message: 'message of STEP_FAILED',
      retryable: false,
    });
  });

  it('StepError factories say whether another attempt may help; a failed step may keep a result', () => {
    expect(
      toStepFailure(StepError.retryable('HTTP_STATUS', 'The server answered 503'), translate),
    ).toMatchObject({
      code: 'HTTP_STATUS',
      retryable: true,
    });
    expect(
      toStepFailure(
        StepError.fatal('DATA_VALIDATION_FAILED', 'invalid', { result: { valid: false } }),
        translate,
      ),
    ).toMatchObject({ code: 'DATA_VALIDATION_FAILED', retryable: false, result: { valid: false } });
  });
});
