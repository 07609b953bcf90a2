import type { DynamicModule } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { createConfig } from '../factories/config.factory';
import { adminToken, createUser, type TestUser } from '../factories/user.factory';
import { startHttpServer, type HttpTestServer } from './http-test-server';
import { startSmtpTestServer, type SmtpTestServer, type SmtpTestServerOptions } from './smtp-test-server';
import { createTestApp, type TestApp } from './test-app';

/** What a test of an app suite starts with; what the options did not ask for is left undefined. */
export interface AppSuite {
  t: TestApp;
  /** The seeded admin's token. */
  admin: string;
  /** The users asked for, in the order of `options.users`. */
  users: TestUser[];
  /** `users[0]`. */
  user: TestUser;
  /** The forms asked for, in the order of `options.forms`. */
  configIds: string[];
  /** `configIds[0]`. */
  configId: string;
  /** A real HTTP server on 127.0.0.1 (reset before each test), allow-listed for the `api` step. */
  partner: HttpTestServer;
  /** A real SMTP server on 127.0.0.1, the app's `SMTP_URL`. */
  smtp: SmtpTestServer;
  /** The port the app listens on, on 127.0.0.1 (`listen: true`), for clients over a real socket. */
  port: number;
}

export interface AppSuiteOptions {
  /** Log the seeded admin in (the default); `false` for suites that count logins or want none. */
  admin?: boolean;
  /**
   * Environment overrides (names as in .env.example), on top of what `partner` and `smtp` set; a
   * function gets the started servers (for variables that name them).
   */
  env?: Record<string, string> | ((servers: Pick<AppSuite, 'partner' | 'smtp'>) => Record<string, string>);
  /** Extra modules, e.g. one registering a custom workflow step type. */
  modules?: NonNullable<DynamicModule['imports']>;
  /** Start a partner HTTP server and allow-list it for outbound calls. */
  partner?: boolean;
  /**
   * Listen on a free port of 127.0.0.1, for suites whose client is a real socket (a shell script, a
   * generated client, raw bytes) rather than `inject`.
   */
  listen?: boolean;
  /** Start an SMTP server (with these options) and send the app's mail to it. */
  smtp?: boolean | SmtpTestServerOptions;
  /** Users to create (a count of plain users, or each one's role, site or e-mail). */
  users?: number | Array<NonNullable<Parameters<typeof createUser>[1]>>;
  /** Forms to create through the admin API: a count of order forms, or each one's overrides. */
  forms?: number | Array<Record<string, unknown>>;
  /**
   * `each` (the default): before every test the app is emptied and the seed made again. `once`:
   * seeded once for the whole file, for suites whose tests build on each other.
   */
  seed?: 'each' | 'once';
}

/**
 * Registers the hooks every suite that boots the app repeats: one app (and the servers it talks to)
 * for the file, and a clean seed (admin token, users, forms) before each test, or once
 * (`seed: 'once'`). It returns the suite, an object whose fields are filled once the app has started
 * (`t`, `partner`, `smtp`, `port`, in time for a suite's own `beforeAll`) and when the seed is made:
 * `const s = useAppSuite({ users: 1 })`, then `s.t`, `s.admin`, `s.user` inside hooks and tests.
 * The older form hands the suite to a callback, for suites that keep their own variables:
 * `useAppSuite((s) => ({ t, admin, user } = s), { users: 1 })`. A suite's own `beforeEach`,
 * registered after this call, runs after the seed.
 */
export function useAppSuite(options?: AppSuiteOptions): AppSuite;
export function useAppSuite(use: (suite: AppSuite) => void, options?: AppSuiteOptions): AppSuite;
export function useAppSuite(
  useOrOptions?: ((suite: AppSuite) => void) | AppSuiteOptions,
  maybeOptions: AppSuiteOptions = {},
): AppSuite {
  const use = typeof useOrOptions === 'function' ? useOrOptions : undefined;
  const options = typeof useOrOptions === 'function' ? maybeOptions : (useOrOptions ?? {});
  const suite = {} as AppSuite;
  let t: TestApp | undefined;
  let partner: HttpTestServer | undefined;
  let smtp: SmtpTestServer | undefined;
  let port: number | undefined;

  const seed = async (): Promise<void> => {
    const admin = options.admin === false ? '' : await adminToken(t!);
    const users: TestUser[] = [];
    for (const user of toList(options.users)) users.push(await createUser(t!, user));
    const configIds: string[] = [];
    for (const form of toList(options.forms)) configIds.push(await createConfig(t!, admin, form));
    Object.assign(suite, {
      t: t!,
      admin,
      users,
      user: users[0],
      configIds,
      configId: configIds[0],
      partner: partner!,
      smtp: smtp!,
      port: port!,
    });
    use?.(suite);
  };

  beforeAll(async () => {
    const env: Record<string, string> = {};
    if (options.partner) {
      partner = await startHttpServer();
      env.WORKFLOW_API_ALLOWED_HOSTS = `127.0.0.1:${partner.port}`;
    }
    if (options.smtp) {
      smtp = await startSmtpTestServer(options.smtp === true ? {} : options.smtp);
      env.SMTP_URL = smtp.url;
      env.MAIL_FROM = 'forms@example.com';
    }
    const own =
      typeof options.env === 'function' ? options.env({ partner: partner!, smtp: smtp! }) : options.env;
    t = await createTestApp({ env: { ...env, ...own }, modules: options.modules });
    if (options.listen) {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      port = (t.app.getHttpServer().address() as AddressInfo).port;
    }
    // What exists from the start is the suite's before the first seed, for a suite's own beforeAll.
    Object.assign(suite, { t, partner, smtp, port });
    if (options.seed === 'once') await seed();
  });
  afterAll(async () => {
    await t?.close();
    await partner?.close();
    await smtp?.close();
  });
  if (options.seed !== 'once') {
    beforeEach(async () => {
      await t!.reset();
      partner?.reset();
      if (smtp) {
        smtp.messages.length = 0;
        await smtp.behave('accept');
      }
      await seed();
    });
  }
  return suite;
}

function toList<T extends object>(entries: number | T[] | undefined): T[] {
  if (Array.isArray(entries)) return entries;
  return Array.from({ length: entries ?? 0 }, () => ({}) as T);
}

/** What most workflow suites start with: a partner server, a fast queue poll, a user and a form. */
export const WORKFLOW_SUITE: AppSuiteOptions = {
  partner: true,
  env: { WORKFLOW_POLL_MS: '100' },
  users: 1,
  forms: 1,
};
