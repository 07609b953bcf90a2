import { randomUUID } from 'node:crypto';

/** This process's name on the leases of the imports it works on. */
export const IMPORT_INSTANCE = `import-${randomUUID()}`;
