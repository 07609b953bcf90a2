type Fields = Record<string, unknown>;

const isPlainObject = (value: unknown): value is Fields =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Sets an own property, even one named `__proto__`, without touching the prototype. */
function setOwn(target: Fields, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * `changes` merged into `data`: a key present in both holding objects on both sides is merged the
 * same way; any other value (scalar, array, null) replaces. Keys already in `data` keep their place,
 * new keys follow in the order given.
 */
export function mergeFields(data: Fields, changes: Fields): Fields {
  const merged: Fields = {};
  for (const key of Object.keys(data)) setOwn(merged, key, data[key]);
  for (const key of Object.keys(changes)) {
    const before = Object.hasOwn(merged, key) ? merged[key] : undefined;
    const change = changes[key];
    setOwn(
      merged,
      key,
      isPlainObject(before) && isPlainObject(change) ? mergeFields(before, change) : change,
    );
  }
  return merged;
}

/**
 * The values a grid-library store sends, as record fields (docs/grid-protocol.md section 16): the grid's
 * columns are named `data.<field>`, so a key `data.<field>` is `<field>` (`data.a.b` is `{a: {b}}`),
 * and the nested form a grid builds for such columns, `{"data": {...}}`, is unwrapped the same way.
 * Other keys are taken as field names.
 */
export function storeValuesToFields(values: Fields): Fields {
  const fields: Fields = {};
  const put = (path: string[], value: unknown) => {
    let at = fields;
    for (const segment of path.slice(0, -1)) {
      if (!isPlainObject(at[segment]) || !Object.hasOwn(at, segment)) setOwn(at, segment, {});
      at = at[segment] as Fields;
    }
    const last = path[path.length - 1];
    const before = Object.hasOwn(at, last) ? at[last] : undefined;
    setOwn(at, last, isPlainObject(before) && isPlainObject(value) ? mergeFields(before, value) : value);
  };
  for (const key of Object.keys(values)) {
    const value = values[key];
    if (key === 'data' && isPlainObject(value)) {
      for (const field of Object.keys(value)) put([field], value[field]);
    } else if (key.startsWith('data.') && key.length > 5) {
      put(key.slice(5).split('.'), value);
    } else {
      put([key], value);
    }
  }
  return fields;
}
