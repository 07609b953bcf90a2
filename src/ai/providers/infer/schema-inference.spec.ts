import { compileSchema } from '../../../validation/json-schema';
import { inferSchema, titleOf } from './schema-inference';

const ORDERS = [
  {
    orderId: 1001,
    customerEmail: 'anna.kovacs@example.com',
    orderedAt: '2026-03-01T09:15:00Z',
    deliveryDate: '2026-03-04',
    status: 'paid',
    total: 129.9,
    quantity: 3,
    gift: false,
    website: 'https://shop.example.com/a',
    address: { city: 'Budapest', zip: '1051', street: 'Nádor u. 5' },
    items: [
      { sku: 'A-1', qty: 1 },
      { sku: 'B-2', qty: 2, note: 'wrap' },
    ],
    coupon: null,
  },
  {
    orderId: 1002,
    customerEmail: 'bob@example.org',
    orderedAt: '2026-03-02T18:40:10+01:00',
    deliveryDate: '2026-03-05',
    status: 'shipped',
    total: 45,
    quantity: 1,
    gift: true,
    website: 'http://example.net',
    address: { city: 'Pécs', zip: '7621' },
    items: [{ sku: 'C-3', qty: 1 }],
    coupon: 'SPRING',
  },
  {
    orderId: 1003,
    customerEmail: 'eve@example.com',
    orderedAt: '2026-03-03T07:00:00Z',
    status: 'paid',
    total: 310.25,
    quantity: 7,
    gift: false,
    address: { city: 'Győr', zip: '9021', street: 'Baross út 2' },
    items: [],
    phone: '+36 30 123 4567',
  },
  {
    orderId: 1004,
    customerEmail: 'dan@example.com',
    orderedAt: '2026-03-03T12:30:00Z',
    deliveryDate: '2026-03-06',
    status: 'paid',
    total: 12,
    quantity: 2,
    gift: false,
    address: { city: 'Budapest', zip: '1117' },
    items: [{ sku: 'A-1', qty: 4 }],
    coupon: null,
    reference: 42,
  },
];

describe('inferSchema', () => {
  const { schema, warnings } = inferSchema(ORDERS);
  const properties = schema.properties as Record<string, Record<string, unknown>>;

  it('infers types, formats, enums, ranges, nested objects and arrays, with titles from the keys', () => {
    expect(Object.keys(properties)).toEqual([
      'orderId',
      'customerEmail',
      'orderedAt',
      'deliveryDate',
      'status',
      'total',
      'quantity',
      'gift',
      'website',
      'address',
      'items',
      'coupon',
      'phone',
      'reference',
    ]);
    expect(properties.orderId).toEqual({ title: 'Order id', type: 'integer', minimum: 1001, maximum: 1004 });
    expect(properties.customerEmail).toEqual({ title: 'Customer email', type: 'string', format: 'email' });
    expect(properties.orderedAt).toEqual({ title: 'Ordered at', type: 'string', format: 'date-time' });
    expect(properties.deliveryDate).toEqual({ title: 'Delivery date', type: 'string', format: 'date' });
    expect(properties.status).toEqual({ title: 'Status', type: 'string', enum: ['paid', 'shipped'] });
    expect(properties.total).toEqual({ title: 'Total', type: 'number', minimum: 12, maximum: 310.25 });
    expect(properties.gift).toEqual({ title: 'Gift', type: 'boolean' });
    expect(properties.website).toEqual({ title: 'Website', type: 'string', format: 'uri' });
    expect(properties.address).toEqual({
      title: 'Address',
      type: 'object',
      properties: {
        city: { title: 'City', type: 'string' },
        zip: { title: 'Zip', type: 'string' },
        street: { title: 'Street', type: 'string' },
      },
      required: ['city', 'zip'],
    });
    expect(properties.items).toEqual({
      title: 'Items',
      type: 'array',
      items: {
        type: 'object',
        properties: {
          sku: { title: 'Sku', type: 'string' },
          qty: { title: 'Qty', type: 'integer', minimum: 1, maximum: 4 },
          note: { title: 'Note', type: 'string' },
        },
        required: ['sku', 'qty'],
      },
    });
    expect(properties.coupon).toEqual({ title: 'Coupon', type: ['string', 'null'] });
  });

  it('requires exactly the fields present (not null) in every sample', () => {
    expect(schema.required).toEqual([
      'orderId',
      'customerEmail',
      'orderedAt',
      'status',
      'total',
      'quantity',
      'gift',
      'address',
      'items',
    ]);
  });

  it('accepts every sample it was inferred from (checked by the service validator itself)', () => {
    const validate = compileSchema(schema);
    for (const sample of ORDERS) expect({ sample, valid: validate(sample) }).toEqual({ sample, valid: true });
    expect(validate({ ...ORDERS[0], customerEmail: 'not an e-mail' })).toBe(false);
    expect(validate({ ...ORDERS[0], status: 'lost' })).toBe(false);
  });

  it('warns about observed ranges and enums', () => {
    expect(warnings).toEqual([
      {
        code: 'RANGES_FROM_SAMPLES',
        params: { fields: 'orderId, total, quantity, items[].qty, reference' },
      },
      { code: 'ENUM_FROM_SAMPLES', field: 'status', params: { field: 'status', values: 'paid, shipped' } },
    ]);
  });

  it('unions mixed types (integers with fractions are numbers) and warns; an all-null field accepts anything', () => {
    const mixed = inferSchema([
      { code: 'A1', score: 1, note: null },
      { code: 17, score: 2.5, note: null },
      { code: null, score: 3 },
    ]);
    const props = mixed.schema.properties as Record<string, unknown>;
    expect(props.code).toEqual({ title: 'Code', type: ['string', 'integer', 'null'] });
    expect(props.score).toEqual({ title: 'Score', type: 'number', minimum: 1, maximum: 3 });
    expect(props.note).toEqual({ title: 'Note' });
    expect(mixed.schema.required).toEqual(['score']);
    expect(mixed.warnings.map((w) => w.code)).toEqual(['RANGES_FROM_SAMPLES', 'MIXED_TYPES', 'NO_VALUES']);
  });

  it('handles large samples (a 200,000-element array) without overflowing the stack', () => {
    const readings = Array.from({ length: 200_000 }, (_, i) => i % 1000);
    const { schema: big } = inferSchema([{ readings }]);
    expect((big.properties as Record<string, unknown>).readings).toEqual({
      title: 'Readings',
      type: 'array',
      items: { type: 'integer', minimum: 0, maximum: 999 },
    });
  });

  it('keeps a prototype-named key as a plain property', () => {
    const { schema: odd } = inferSchema([JSON.parse('{"__proto__": "x", "ok": 1}')]);
    expect(Object.getOwnPropertyNames(odd.properties)).toEqual(['__proto__', 'ok']);
    expect(() => compileSchema(odd)).not.toThrow();
  });
});

describe('titleOf', () => {
  it('turns keys into sentence-case titles, keeping acronyms', () => {
    expect(titleOf('firstName')).toBe('First name');
    expect(titleOf('first_name')).toBe('First name');
    expect(titleOf('zip-code')).toBe('Zip code');
    expect(titleOf('customerID')).toBe('Customer ID');
    expect(titleOf('HTTPStatus')).toBe('HTTP status');
    expect(titleOf('név')).toBe('Név');
    expect(titleOf('__')).toBe('__');
  });
});
