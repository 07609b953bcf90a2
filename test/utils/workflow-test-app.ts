import type { DynamicModule } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { AppModule } from '../../src/app.module';
import { loadConfig } from '../../src/config/app-config';
import { testEnv } from './test-app';
import { createTestDatabase } from './test-database';

/**
 * Compiles and initialises the application module with more modules and returns the error the boot
 * failed with (null when it booted). Unlike a failed `createTestApp`, it closes everything it
 * opened (the module, its Redis connection, the private database).
 */
export async function bootError(
  modules: NonNullable<DynamicModule['imports']>,
  env: Record<string, string> = {},
): Promise<Error | null> {
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
