import type { DynamicModule } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { AppModule } from '../../src/app.module';
import { loadConfig } from '../../src/config/app-config';
import { createTestApp, testEnv, type TestApp, type TestAppOptions } from './test-app';
import { createTestDatabase } from './test-database';

type Modules = NonNullable<DynamicModule['imports']>;

/**
 * The real application (booted by `createApp`, exactly as `createTestApp` does) with more modules,
 * e.g. one providing a custom workflow step type. `createApp(config, database)` takes no modules
 * although `AppModule.forRoot` does, so `AppModule.forRoot` is wrapped for the duration of the boot
 * to add them.
 */
export async function createTestAppWithModules(
  modules: Modules,
  options: TestAppOptions = {},
): Promise<TestApp> {
  const forRoot = AppModule.forRoot.bind(AppModule);
  const spy = jest
    .spyOn(AppModule, 'forRoot')
    .mockImplementation((root) => forRoot({ ...root, modules: [...(root.modules ?? []), ...modules] }));
  try {
    return await createTestApp(options);
  } finally {
    spy.mockRestore();
  }
}

/**
 * Compiles and initialises the application module with more modules and returns the error the boot
 * failed with (null when it booted); everything it opened is closed again.
 */
export async function bootError(modules: Modules, env: Record<string, string> = {}): Promise<Error | null> {
  const database = await createTestDatabase();
  const config = loadConfig(testEnv(env));
  let moduleRef: TestingModule | undefined;
  try {
    moduleRef = await Test.createTestingModule({
      imports: [AppModule.forRoot({ config, database: database.client, modules })],
    }).compile();
    await moduleRef.init();
    return null;
  } catch (error) {
    return error as Error;
  } finally {
    await moduleRef?.close().catch(() => undefined);
    await database.close();
  }
}
