/** @type {import('jest').Config} */
module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  globalSetup: '<rootDir>/test/utils/global-setup.ts',
  setupFiles: ['<rootDir>/test/utils/setup-env.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
  // PGlite's WASM instances are large; recycle a worker before it grows without bound.
  workerIdleMemoryLimit: '1536MB',
};
