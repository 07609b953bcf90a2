/** @type {import('jest').Config} */
module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  globalSetup: '<rootDir>/test/utils/global-setup.ts',
  setupFiles: ['<rootDir>/test/utils/setup-env.ts'],
  // Also the bound of every hook. A suite's beforeAll boots an app in ~1.5 s here, but CI runs two jest
  // runs side by side on 2 CPUs, and on a slower machine one such hook once passed 30 s. The limit
  // is there to catch a hang, not to time anything.
  testTimeout: 60000,
  maxWorkers: 2,
  // PGlite's WASM instances are large; recycle a worker before it grows without bound.
  workerIdleMemoryLimit: '1536MB',
};
