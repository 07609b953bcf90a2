const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when the string can be a primary key; anything else can never match, so callers answer 404. */
export const isUuid = (value: string): boolean => UUID.test(value);
