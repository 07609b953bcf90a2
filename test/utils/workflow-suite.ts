import type { DynamicModule } from '@nestjs/common';
import { createConfig } from '../factories/config.factory';
import { adminToken, createUser, type TestUser } from '../factories/user.factory';
import { startHttpServer, type HttpTestServer } from './http-test-server';
import { createTestApp, type TestApp } from './test-app';

/** What each test of a workflow suite starts with: a clean app, a partner server, an admin, a user, a form. */
export interface WorkflowSuite {
  t: TestApp;
  receiver: HttpTestServer;
  admin: string;
  user: TestUser;
  configId: string;
}

/**
 * Registers the hooks every workflow suite repeats: one app (the partner allow-listed, a fast queue
 * poll) and one partner server for the file, and before each test a reset app and partner, an admin
 * token, a fresh user and form, handed to `use` (assign them to the suite's own variables).
 */
export function useWorkflowSuite(
  use: (suite: WorkflowSuite) => void,
  options: { env?: Record<string, string>; modules?: NonNullable<DynamicModule['imports']> } = {},
): void {
  let t: TestApp | undefined;
  let receiver: HttpTestServer | undefined;
  beforeAll(async () => {
    receiver = await startHttpServer();
    t = await createTestApp({
      env: {
        WORKFLOW_API_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}`,
        WORKFLOW_POLL_MS: '100',
        ...options.env,
      },
      modules: options.modules,
    });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });
  beforeEach(async () => {
    await t!.reset();
    receiver!.reset();
    const admin = await adminToken(t!);
    use({
      t: t!,
      receiver: receiver!,
      admin,
      user: await createUser(t!),
      configId: await createConfig(t!, admin),
    });
  });
}
