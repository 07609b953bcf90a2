/**
 * Schemas of values the service stores as given. `type: object` alone makes generated clients type
 * a property as `{}` (`Record<string, never>` in openapi-typescript), so free-form objects say
 * `additionalProperties: true`, and values that may be any JSON say so with `oneOf`.
 */
export const FREE_OBJECT = { type: 'object' as const, additionalProperties: true };

/** Any JSON value: a JSONLogic rule (`true`, `{"var": "qty"}`), a group key, a step result. */
export const JSON_VALUE = {
  oneOf: [
    FREE_OBJECT,
    { type: 'array' as const, items: {} },
    { type: 'string' as const },
    { type: 'number' as const },
    { type: 'boolean' as const },
  ],
};

/** A name -> list of names map: role permissions (`{"data": ["read"]}`) and form grants. */
export const NAME_LISTS = {
  type: 'object' as const,
  additionalProperties: { type: 'array' as const, items: { type: 'string' as const } },
};
