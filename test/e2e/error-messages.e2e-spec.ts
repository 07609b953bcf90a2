import { ORDER_FORM } from '../factories/config.factory';
import { postConfig } from '../utils/api-requests';
import { useAppSuite } from '../utils/app-suite';

/** Refusals that say what to fix. */
describe('error messages', () => {
  const s = useAppSuite({ seed: 'once' });
  const login = (payload: object) => s.t.request({ method: 'POST', url: '/auth/login', payload });

  it('a body without a required property says it is required, not that its value is malformed', async () => {
    const response = await login({ password: 'x' });

    expect(response.statusCode).toBe(422);
    expect(response.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      validationErrors: [{ field: 'email', rule: 'required', message: 'email is required' }],
    });
  });

  it('a malformed value still says what is wrong with it', async () => {
    const response = await login({ email: 'not-an-address', password: 'x' });

    expect(response.statusCode).toBe(422);
    expect(response.json().validationErrors).toEqual([
      { field: 'email', rule: 'isEmail', message: 'email must be an email' },
    ]);
  });

  it('an invalid JSON Schema names the keyword and what is wrong with it', async () => {
    const response = await postConfig(s.t, s.admin, {
      ...ORDER_FORM,
      schema: { type: 'object', required: 'name', properties: { age: { type: 'strin' } } },
    });

    expect(response.statusCode).toBe(422);
    expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(response.json().validationErrors).toEqual([
      {
        field: 'schema.properties.age.type',
        rule: 'jsonSchema',
        message:
          '"properties.age.type" must be equal to one of the allowed values: array, boolean, integer, null, number, object, string',
      },
      { field: 'schema.required', rule: 'jsonSchema', message: '"required" must be array' },
    ]);
  });

  it('a $schema naming another draft, or not a string, is a 422 on schema.$schema (Ajv throws for both)', async () => {
    for (const $schema of ['http://json-schema.org/draft-07/schema#', 5]) {
      const response = await postConfig(s.t, s.admin, {
        ...ORDER_FORM,
        schema: { ...ORDER_FORM.schema, $schema },
      });

      expect(response.statusCode).toBe(422);
      expect(response.json()).toMatchObject({
        code: 'VALIDATION_FAILED',
        validationErrors: [{ field: 'schema.$schema', rule: 'jsonSchema', message: expect.any(String) }],
      });
    }
  });
});
