import type { TestApp } from '../utils/test-app';
import { bodyOf } from '../utils/expect-status';

export const ORDER_FORM = {
  title: 'Order form',
  type: 'form',
  tags: ['orders', 'public'],
  schema: {
    type: 'object',
    required: ['name', 'qty'],
    properties: {
      name: { type: 'string', minLength: 1 },
      qty: { type: 'integer', minimum: 1 },
      price: { type: 'number', minimum: 0 },
      city: { type: 'string' },
    },
  },
  validationRules: [
    {
      name: 'maxQty',
      field: 'qty',
      rule: { '<=': [{ var: 'qty' }, 100] },
      message: { en: 'At most 100 pieces', hu: 'Legfeljebb 100 darab' },
    },
  ],
  computedRules: [
    { field: 'total', expression: { '*': [{ var: 'qty' }, { var: 'price' }] } },
    { field: 'bigOrder', expression: { '>': [{ var: 'total' }, 100] } },
  ],
  preferences: { saveLimit: null, allowEdit: true, allowDelete: true, storeComputedResults: true },
};

/** Creates a configuration through the admin API and returns its id. */
export async function createConfig(
  t: TestApp,
  adminToken: string,
  overrides: Record<string, unknown> = {},
): Promise<string> {
  const response = await t.request({
    method: 'POST',
    url: '/api/configs',
    token: adminToken,
    payload: { ...ORDER_FORM, ...overrides },
  });
  return bodyOf<{ id: string }>(response, 201, 'config create').id;
}

/**
 * A configuration as the API answers it once stored, with what a create fills in when the body
 * leaves it out (no schema, no rules, default preferences, version 1); `fields` are the rest.
 */
export function storedConfig(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    id: expect.any(String),
    tags: [],
    siteId: null,
    description: null,
    schema: null,
    validationRules: [],
    computedRules: [],
    preferences: { saveLimit: null, allowEdit: true, allowDelete: true, storeComputedResults: false },
    definition: null,
    isActive: true,
    createdAt: expect.any(String),
    updatedAt: expect.any(String),
    version: 1,
    ...fields,
  };
}

/**
 * The overrides of a form for suites about files: "Claims", a `name` and the given fields (files,
 * typically: `{ type: 'string', format: 'attachment' }`), no rules and no save limit.
 */
export function claimsForm(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    title: 'Claims',
    schema: { type: 'object', properties: { name: { type: 'string' }, ...fields } },
    computedRules: [],
    validationRules: [],
    preferences: { saveLimit: null },
  };
}
