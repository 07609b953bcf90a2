import { draftSchemaOf } from './draft-schema';

describe('draftSchemaOf', () => {
  it('drops required and dependentRequired at every level, keeping types and unknown-field refusals', () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'address'],
      dependentRequired: { qty: ['price'] },
      properties: {
        name: { type: 'string', minLength: 1 },
        required: { type: 'boolean' },
        address: {
          type: 'object',
          required: ['city'],
          properties: { city: { type: 'string' } },
        },
        lines: {
          type: 'array',
          items: { type: 'object', required: ['sku'], properties: { sku: { type: 'string' } } },
        },
      },
    };
    expect(draftSchemaOf(schema)).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: {
        name: { type: 'string', minLength: 1 },
        required: { type: 'boolean' },
        address: { type: 'object', properties: { city: { type: 'string' } } },
        lines: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' } } } },
      },
    });
    // The form's own schema is left as it was.
    expect(schema.required).toEqual(['name', 'address']);
  });

  it('turns oneOf into anyOf and leaves conditions (not, if) as written', () => {
    const draft = draftSchemaOf({
      anyOf: [{ required: ['a'] }],
      oneOf: [{ required: ['b'] }, { required: ['c'] }],
      not: { required: ['d'] },
      if: { required: ['e'] },
      then: { required: ['f'] },
    });
    expect(draft).toEqual({
      anyOf: [{}],
      allOf: [{ anyOf: [{}, {}] }],
      not: { required: ['d'] },
      if: { required: ['e'] },
      then: {},
    });
  });
});
