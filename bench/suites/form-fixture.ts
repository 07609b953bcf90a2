/** The benchmark form: 10 fields, 3 validation rules, 2 computed values (docs/design.md section 8). */
export const BENCH_FORM = {
  title: 'Benchmark form',
  type: 'form',
  tags: ['bench'],
  schema: {
    type: 'object',
    required: ['name', 'email', 'age', 'city'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100 },
      email: { type: 'string', format: 'email' },
      age: { type: 'integer', minimum: 0, maximum: 150 },
      city: { type: 'string' },
      score: { type: 'number' },
      qty: { type: 'integer', minimum: 0 },
      price: { type: 'number', minimum: 0 },
      active: { type: 'boolean' },
      joined: { type: 'string', format: 'date' },
      note: { type: 'string', maxLength: 500 },
    },
  },
  validationRules: [
    {
      name: 'adult',
      field: 'age',
      rule: { '>=': [{ var: 'age' }, 18] },
      message: { en: 'Must be an adult', hu: 'Nagykorúnak kell lennie' },
    },
    {
      name: 'qtyLimit',
      field: 'qty',
      rule: { '<=': [{ var: 'qty' }, 1000] },
      message: { en: 'Too many', hu: 'Túl sok' },
    },
    {
      name: 'scoreRange',
      field: 'score',
      rule: { '<=': [{ var: 'score' }, 1000] },
      message: { en: 'Score too high', hu: 'Túl magas' },
    },
  ],
  computedRules: [
    { field: 'total', expression: { '*': [{ var: 'qty' }, { var: 'price' }] } },
    { field: 'isSenior', expression: { '>=': [{ var: 'age' }, 65] } },
  ],
  preferences: { saveLimit: null, allowEdit: true, allowDelete: true, storeComputedResults: true },
};

export const BENCH_SUBMISSION = {
  name: 'Jane Doe',
  email: 'jane@example.com',
  age: 34,
  city: 'Szeged',
  score: 512.5,
  qty: 3,
  price: 9.99,
  active: true,
  joined: '2024-05-17',
  note: 'benchmark submission',
};

/** Creates the benchmark form through the API; its id. */
export async function createBenchForm(serviceUrl: string, token: string): Promise<string> {
  const response = await fetch(`${serviceUrl}/api/configs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(BENCH_FORM),
  });
  if (response.status !== 201)
    throw new Error(`config create failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}
