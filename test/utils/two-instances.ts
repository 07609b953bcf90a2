import { createTestApp, type TestApp } from './test-app';

/** Two instances of the service on one database (the first one's), as a scaled-out deployment runs. */
export interface TwoInstances {
  first: TestApp;
  second: TestApp;
}

/**
 * Boots two instances with `env` on one database for the file (the fields are filled before the
 * file's own `beforeAll` hooks registered after this call) and closes both after it.
 */
export function useTwoInstances(env: Record<string, string>): TwoInstances {
  const apps = {} as TwoInstances;
  beforeAll(async () => {
    apps.first = await createTestApp({ env });
    apps.second = await createTestApp({ env, database: apps.first.database });
  });
  afterAll(async () => {
    await apps.second?.close();
    await apps.first?.close();
  });
  return apps;
}
