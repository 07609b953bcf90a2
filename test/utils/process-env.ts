/**
 * Sets process environment variables for a file's tests and puts back what was there after its last
 * test, for suites whose `{{env.X}}` values the app reads from the process. Called before
 * `useAppSuite`, the values are set before the app boots. A name given `undefined` is only put back:
 * the suite sets it itself (to a test server's address, say).
 */
export function useProcessEnv(values: Record<string, string | undefined>): void {
  const saved: Record<string, string | undefined> = {};
  beforeAll(() => {
    for (const [name, value] of Object.entries(values)) {
      saved[name] = process.env[name];
      if (value !== undefined) process.env[name] = value;
    }
  });
  afterAll(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}
