import type { ArgumentMetadata } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsArray, IsIn, IsInt, IsOptional, IsString, Min } from 'class-validator';
import { AppError } from '../errors/app-error';
import { createValidationPipe } from './validation.pipe';

class AllOptionalQuery {
  @IsOptional() @IsIn(['fast', 'slow']) mode?: string;
  @IsOptional() @IsString() lang?: string;
}

class OneRequired {
  @IsOptional() @IsString() lang?: string;
  @IsString() name: string;
}

class PagedQuery {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) page?: number;
  @IsOptional() @IsArray() @IsString({ each: true }) names?: string[];
  @IsOptional() @IsString({ each: true }) tags?: string[];
}

class WithoutRules {
  note?: string;
}

const query = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'query', metatype });

/** The validation failure's field errors, or the value the pipe gave. */
async function outcome(value: unknown, metatype: ArgumentMetadata['metatype']): Promise<unknown> {
  try {
    return await createValidationPipe().transform(value, query(metatype));
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { code: error.code, errors: error.validationErrors };
  }
}

describe('the validation pipe', () => {
  it('gives an instance for an empty object when every property is optional', async () => {
    const value = await outcome({}, AllOptionalQuery);
    expect(value).toBeInstanceOf(AllOptionalQuery);
    expect(value).toEqual({});
  });

  it('still checks what is sent, and refuses unknown properties', async () => {
    expect(await outcome({ mode: 'fast' }, AllOptionalQuery)).toEqual({ mode: 'fast' });
    expect(await outcome({ mode: 'sideways' }, AllOptionalQuery)).toEqual({
      code: 'VALIDATION_FAILED',
      errors: [
        { field: 'mode', rule: 'isIn', message: 'mode must be one of the following values: fast, slow' },
      ],
    });
    expect(await outcome({ other: 1 }, AllOptionalQuery)).toEqual({
      code: 'VALIDATION_FAILED',
      errors: [{ field: 'other', rule: 'whitelistValidation', message: 'property other should not exist' }],
    });
  });

  it('refuses an empty object where a property is required, or where the class has no rules at all', async () => {
    expect(await outcome({}, OneRequired)).toEqual({
      code: 'VALIDATION_FAILED',
      errors: [{ field: 'name', rule: 'required', message: 'name is required' }],
    });
    expect(await outcome({}, WithoutRules)).toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('takes the last value of a parameter given more than once, unless the property is a list', async () => {
    expect(await outcome({ page: ['1', '2'] }, PagedQuery)).toEqual({ page: 2 });
    expect(await outcome({ page: ['2', 'x'] }, PagedQuery)).toEqual({
      code: 'VALIDATION_FAILED',
      errors: [
        { field: 'page', rule: 'min', message: 'page must not be less than 1' },
        { field: 'page', rule: 'isInt', message: 'page must be an integer number' },
      ],
    });
    expect(await outcome({ names: ['a', 'b'], tags: ['c', 'd'] }, PagedQuery)).toEqual({
      names: ['a', 'b'],
      tags: ['c', 'd'],
    });
    expect(await outcome({ mode: ['sideways', 'fast'] }, AllOptionalQuery)).toEqual({ mode: 'fast' });
    // A parameter named `__proto__` never becomes the instance's prototype (class-transformer skips it).
    const polluting = JSON.parse('{"__proto__": ["a", "b"], "mode": ["slow", "fast"]}');
    const taken = await outcome(polluting, AllOptionalQuery);
    expect(taken).toEqual({ mode: 'fast' });
    expect(Object.getPrototypeOf(taken)).toBe(AllOptionalQuery.prototype);
  });
});
