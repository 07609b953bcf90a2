// Quiet, deterministic defaults for every test file; a test passes its own overrides to createTestApp.
process.env.NODE_ENV = process.env.NODE_ENV === 'production' ? 'production' : 'test';
process.env.LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'silent';
