/*
 * The schema a draft is checked against (README "Drafts"): the form's own, with what demands a
 * field's presence taken out, so a half-filled form keeps its types and shapes (a number field never
 * holds a string, unknown fields are refused) without its required fields.
 */

/** Keywords whose value is one subschema that constrains the instance itself (loosened in place). */
const SUBSCHEMA_KEYWORDS = [
  'additionalProperties',
  'items',
  'then',
  'else',
  'unevaluatedProperties',
  'unevaluatedItems',
] as const;
/** Keywords whose value is a list of subschemas the instance must meet (all, or any one). */
const SUBSCHEMA_LIST_KEYWORDS = ['allOf', 'anyOf', 'prefixItems', 'items'] as const;
/** Keywords whose value maps names to subschemas. */
const SUBSCHEMA_MAP_KEYWORDS = [
  'properties',
  'patternProperties',
  'dependentSchemas',
  '$defs',
  'definitions',
] as const;

type Schema = Record<string, unknown>;

const isSchemaObject = (value: unknown): value is Schema =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * A copy of `schema` without `required` and `dependentRequired` wherever they demand presence.
 * `oneOf` becomes an `anyOf` (taking out `required` could let several branches match, which `oneOf`
 * refuses; which single branch a complete record meets is checked on submit). Conditions keep their
 * meaning and are left as written: `if`, `not`, `contains`, `propertyNames` (taking `required` out
 * of a `not` would make it refuse everything). The form's schema is not changed.
 */
export function draftSchemaOf(schema: Schema): Schema {
  const draft: Schema = { ...schema };
  delete draft.required;
  delete draft.dependentRequired;
  if (Array.isArray(draft.oneOf)) {
    // Beside an `anyOf` of its own, the former `oneOf` joins `allOf` so both still have to hold.
    if (Array.isArray(draft.anyOf)) {
      draft.allOf = [...(Array.isArray(draft.allOf) ? draft.allOf : []), { anyOf: draft.oneOf }];
    } else draft.anyOf = draft.oneOf;
    delete draft.oneOf;
  }
  for (const keyword of SUBSCHEMA_KEYWORDS) {
    if (isSchemaObject(draft[keyword])) draft[keyword] = draftSchemaOf(draft[keyword]);
  }
  for (const keyword of SUBSCHEMA_LIST_KEYWORDS) {
    const list = draft[keyword];
    if (Array.isArray(list))
      draft[keyword] = list.map((item) => (isSchemaObject(item) ? draftSchemaOf(item) : item));
  }
  for (const keyword of SUBSCHEMA_MAP_KEYWORDS) {
    const map = draft[keyword];
    if (isSchemaObject(map)) {
      draft[keyword] = Object.fromEntries(
        Object.entries(map).map(([name, item]) => [name, isSchemaObject(item) ? draftSchemaOf(item) : item]),
      );
    }
  }
  return draft;
}
