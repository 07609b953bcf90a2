import { ConfigValidationError, loadConfig } from './app-config';

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      nodeEnv: 'development',
      databaseUrl: null,
      dataDir: './data',
      redisUrl: null,
      jwtExpiresIn: '8h',
      jwtSecretGenerated: true,
      adminEmail: 'admin@example.com',
      adminPassword: 'admin12345',
      adminName: 'Administrator',
      adminDefaultsUsed: true,
      corsOrigins: [],
      trustProxy: false,
      throttleTtlMs: 60000,
      throttleLimit: 100,
      throttleAuthLimit: 10,
      cacheEnabled: false,
      smtpUrl: null,
      mailFrom: 'no-reply@localhost',
      workflowApiTimeoutMs: 10000,
      bodyLimit: 1048576,
      bodyMaxDepth: 64,
      listMaxRows: 1000,
      listMaxBytes: 16_777_216,
      exportRawCells: false,
      importMaxBytes: 1_073_741_824,
      importBatchRows: 1000,
      importStallMs: 15_000,
      importLeaseMs: 60_000,
      importRetentionDays: 30,
      timezone: 'UTC',
      defaultLocale: 'en',
      logLevel: 'info',
    });
    expect(config.jwtSecret).toHaveLength(64);
  });

  it('lists every problem at once', () => {
    let caught: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        NODE_ENV: 'production',
        DATABASE_URL: 'mysql://x',
        THROTTLE_LIMIT: '-1',
        CACHE_ENABLED: 'maybe',
        TIMEZONE: 'Mars/Olympus',
        DEFAULT_LOCALE: 'de',
        CORS_ORIGINS: 'not an origin',
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigValidationError);
    const problems = (caught as ConfigValidationError).problems;
    expect(problems).toHaveLength(9);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('PORT'),
        expect.stringContaining('JWT_SECRET is required'),
        expect.stringContaining('TIMEZONE'),
        expect.stringContaining('CORS_ORIGINS'),
        expect.stringContaining('DATABASE_URL'),
        expect.stringContaining('THROTTLE_LIMIT'),
        expect.stringContaining('CACHE_ENABLED'),
        expect.stringContaining('DEFAULT_LOCALE'),
        expect.stringContaining('METRICS_TOKEN or METRICS_PORT is required'),
      ]),
    );
  });

  it('in production, /metrics needs METRICS_TOKEN or METRICS_PORT (or metrics off): one problem naming both', () => {
    const production = { NODE_ENV: 'production', JWT_SECRET: 'a-long-enough-secret' };
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (error) {
        return (error as ConfigValidationError).problems;
      }
      return [];
    };
    expect(problems(production)).toEqual([
      'METRICS_TOKEN or METRICS_PORT is required when NODE_ENV=production and METRICS_ENABLED=true ' +
        '(/metrics must not be open to anyone on the main port); or set METRICS_ENABLED=false',
    ]);
    expect(problems({ ...production, METRICS_TOKEN: 'scrape-secret' })).toEqual([]);
    expect(problems({ ...production, METRICS_PORT: '9464' })).toEqual([]);
    expect(problems({ ...production, METRICS_ENABLED: 'false' })).toEqual([]);
    // Outside production the anonymous route on the main port stays the default.
    expect(problems({ NODE_ENV: 'development' })).toEqual([]);
    expect(problems({ NODE_ENV: 'test' })).toEqual([]);
  });

  it('read replicas: none by default; a list of postgres URLs; refused with the embedded database', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (error) {
        return (error as ConfigValidationError).problems;
      }
      return [];
    };
    expect(loadConfig({})).toMatchObject({
      databaseReplicaUrls: [],
      replicaMaxLagMs: 5000,
      replicaPollMs: 250,
    });
    const primary = { DATABASE_URL: 'postgres://app@db:5432/forms' };
    expect(
      loadConfig({
        ...primary,
        DATABASE_REPLICA_URLS: 'postgres://app@replica1:5432/forms, postgresql://app@replica2/forms',
        REPLICA_MAX_LAG_MS: '2000',
        REPLICA_POLL_MS: '100',
      }),
    ).toMatchObject({
      databaseReplicaUrls: ['postgres://app@replica1:5432/forms', 'postgresql://app@replica2/forms'],
      replicaMaxLagMs: 2000,
      replicaPollMs: 100,
    });
    expect(problems({ DATABASE_REPLICA_URLS: 'postgres://app@replica1/forms' })).toEqual([
      'DATABASE_REPLICA_URLS needs DATABASE_URL (the primary): the embedded database (PGlite) has no replicas',
    ]);
    // The entry's text may hold a password: the problem names its position only.
    expect(
      problems({
        ...primary,
        DATABASE_REPLICA_URLS: 'postgres://a@r1/f,mysql://root:secret@r2/f',
        REPLICA_POLL_MS: '5000',
      }),
    ).toEqual([
      'DATABASE_REPLICA_URLS entry 2 must be a postgres:// URL',
      'REPLICA_POLL_MS must be an integer between 50 and 1000 (got "5000")',
    ]);
  });

  it("password hashing: argon2id at OWASP's minimum by default; cheaper only outside production", () => {
    const production = { NODE_ENV: 'production', JWT_SECRET: 'a-long-enough-secret', METRICS_PORT: '9464' };
    expect(loadConfig(production)).toMatchObject({ passwordHashMemoryKib: 19456, passwordHashIterations: 2 });
    const floor =
      "PASSWORD_HASH_MEMORY_KIB >= 19456 and PASSWORD_HASH_ITERATIONS >= 2 when NODE_ENV=production (OWASP's argon2id minimum)";
    expect(() => loadConfig({ ...production, PASSWORD_HASH_MEMORY_KIB: '1024' })).toThrow(floor);
    expect(() => loadConfig({ ...production, PASSWORD_HASH_ITERATIONS: '1' })).toThrow(floor);
    expect(
      loadConfig({ ...production, PASSWORD_HASH_MEMORY_KIB: '65536', PASSWORD_HASH_ITERATIONS: '3' }),
    ).toMatchObject({
      passwordHashMemoryKib: 65536,
      passwordHashIterations: 3,
    });
    expect(
      loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_MEMORY_KIB: '1024', PASSWORD_HASH_ITERATIONS: '1' }),
    ).toMatchObject({
      passwordHashMemoryKib: 1024,
      passwordHashIterations: 1,
    });
  });

  it('reads the AI provider settings: infer by default; openai needs a model; a bad base URL or timeout is refused', () => {
    expect(loadConfig({})).toMatchObject({
      aiProvider: 'infer',
      aiBaseUrl: 'https://api.openai.com/v1',
      aiApiKey: null,
      aiModel: null,
      aiTimeoutMs: 60000,
    });
    expect(
      loadConfig({ AI_PROVIDER: 'OpenAI', AI_BASE_URL: 'http://127.0.0.1:11434/v1/', AI_MODEL: 'llama3' }),
    ).toMatchObject({ aiProvider: 'openai', aiBaseUrl: 'http://127.0.0.1:11434/v1', aiModel: 'llama3' });
    let caught: unknown;
    try {
      loadConfig({ AI_PROVIDER: 'openai', AI_BASE_URL: 'ftp://x', AI_TIMEOUT_MS: '0' });
    } catch (error) {
      caught = error;
    }
    expect((caught as ConfigValidationError).problems).toEqual([
      expect.stringContaining('AI_BASE_URL'),
      expect.stringContaining('AI_TIMEOUT_MS'),
      'AI_MODEL is required when AI_PROVIDER=openai',
    ]);
  });

  it('parses lists, booleans and numbers', () => {
    const config = loadConfig({
      CORS_ORIGINS: 'https://a.example.com, *',
      TRUST_PROXY: '10.0.0.0/8',
      BODY_LIMIT: '2048',
      BODY_MAX_DEPTH: '16',
      WORKFLOW_API_ALLOWED_HOSTS: 'LocalHost, 127.0.0.1:8080',
      JWT_SECRET: 'a-long-enough-secret',
    });
    expect(config.corsOrigins).toEqual(['https://a.example.com', '*']);
    expect(config.trustProxy).toEqual(['10.0.0.0/8']);
    expect(config.bodyLimit).toBe(2048);
    expect(config.bodyMaxDepth).toBe(16);
    expect(config.workflowApiAllowedHosts).toEqual(['localhost', '127.0.0.1:8080']);
    expect(config.jwtSecretGenerated).toBe(false);
  });

  it('DATABASE_PREPARED_STATEMENTS: auto by default; true, false (and their spellings) or auto; anything else is refused', () => {
    expect(loadConfig({}).databasePreparedStatements).toBe('auto');
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'AUTO' }).databasePreparedStatements).toBe('auto');
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'true' }).databasePreparedStatements).toBe(true);
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'no' }).databasePreparedStatements).toBe(false);
    expect(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'sometimes' })).toThrow(
      'DATABASE_PREPARED_STATEMENTS must be auto, true or false (got "sometimes")',
    );
  });

  it('reads TRUST_PROXY as a list of proxies, and refuses "true" and hop counts naming the alternative', () => {
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1,fd00::/8,loopback' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
      'fd00::/8',
      'loopback',
    ]);
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (error) {
        return (error as ConfigValidationError).problems;
      }
      return [];
    };
    const alternatives =
      'name the proxies in front by address or CIDR (e.g. TRUST_PROXY=10.0.0.0/8,127.0.0.1, or uniquelocal)';
    expect(problems({ TRUST_PROXY: 'true' })).toEqual([
      'TRUST_PROXY=true would trust every X-Forwarded-For hop, so any client could pick its own address ' +
        `and escape the rate limits; ${alternatives}`,
    ]);
    expect(problems({ TRUST_PROXY: 'yes' })).toHaveLength(1);
    expect(problems({ TRUST_PROXY: '1' })).toEqual([
      'TRUST_PROXY=1 (a hop count) would believe the nearest X-Forwarded-For entries from any peer, ' +
        `so a client reaching the service directly could pick its own address; ${alternatives}`,
    ]);
    expect(problems({ TRUST_PROXY: '10.0.0.0/33,proxy.example' })).toEqual([
      'TRUST_PROXY must be false or a comma-separated list of proxy addresses/CIDRs ' +
        '(got "10.0.0.0/33, proxy.example")',
    ]);
  });

  it('WORKFLOW_ENV_ORIGINS binds allow-listed names to origins (normalised); a name without an entry goes nowhere', () => {
    const config = loadConfig({
      WORKFLOW_ENV_ALLOWLIST: 'CRM_TOKEN,BASE,OTHER',
      WORKFLOW_ENV_ORIGINS: 'CRM_TOKEN=https://CRM.example.com:443 http://10.0.0.5:8080/ , BASE=*',
    });
    expect([...config.workflowEnvOrigins]).toEqual([
      ['CRM_TOKEN', ['https://crm.example.com', 'http://10.0.0.5:8080']],
      ['BASE', ['*']],
    ]);
    expect(config.workflowEnvOrigins.get('OTHER')).toBeUndefined();
    expect(loadConfig({}).workflowEnvOrigins.size).toBe(0);
  });

  it('a bad WORKFLOW_ENV_ORIGINS entry stops the boot naming it', () => {
    const problems = (origins: string): string[] => {
      try {
        loadConfig({ WORKFLOW_ENV_ALLOWLIST: 'A,B', WORKFLOW_ENV_ORIGINS: origins });
        return [];
      } catch (error) {
        return (error as ConfigValidationError).problems;
      }
    };
    expect(problems('https://a.example')).toEqual([
      'WORKFLOW_ENV_ORIGINS entry "https://a.example" must look like NAME=https://host[:port] (more origins separated by spaces)',
    ]);
    expect(problems('C=https://a.example')).toEqual([
      'WORKFLOW_ENV_ORIGINS names C, which is not in WORKFLOW_ENV_ALLOWLIST',
    ]);
    expect(problems('A=https://a.example/path')[0]).toContain('"https://a.example/path" is not an origin');
    expect(problems('A=https://u:p@a.example')[0]).toContain('is not an origin');
    expect(problems('A=ftp://a.example')[0]).toContain('is not an origin');
    expect(problems('A=https://a.example,A=https://b.example')).toEqual([
      'WORKFLOW_ENV_ORIGINS names A twice (list its origins in one entry, separated by spaces)',
    ]);
    expect(problems('A=* https://a.example')).toEqual(['WORKFLOW_ENV_ORIGINS entry for A: * stands alone']);
  });
});
