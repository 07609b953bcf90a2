import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { workflowEnvOriginsOf } from './workflow-env-origins';
import { APP_CONFIG, type AppConfig, type PreparedStatementsMode } from './app-config.model';
import { trustProxyOf } from './trust-proxy';

// The configuration's shape lives in app-config.model.ts; importers keep one path for both.
export { APP_CONFIG, type AppConfig };

export const SUPPORTED_LOCALES = ['en', 'hu'] as const;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const DEFAULT_ADMIN = { email: 'admin@example.com', password: 'admin12345', name: 'Administrator' };

export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Env = Record<string, string | undefined>;

/**
 * Reads and validates every variable at once, so a bad deployment fails at boot with the whole list
 * of problems instead of the first one.
 */
export function loadConfig(env: Env = process.env): AppConfig {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
      return fallback;
    }
    return Number(raw);
  };
  const truthOf = (raw: string): boolean | undefined =>
    ['true', '1', 'yes'].includes(raw) ? true : ['false', '0', 'no'].includes(raw) ? false : undefined;
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = read(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    const truth = truthOf(raw);
    if (truth === undefined) problems.push(`${name} must be true or false (got "${raw}")`);
    return truth ?? fallback;
  };
  // `auto`: named statements on the connections that reach the server directly (database/postgres-pool).
  const preparedStatementsMode = (): PreparedStatementsMode => {
    const name = 'DATABASE_PREPARED_STATEMENTS';
    const raw = read(name)?.toLowerCase();
    if (raw === undefined || raw === 'auto') return 'auto';
    const truth = truthOf(raw);
    if (truth === undefined) problems.push(`${name} must be auto, true or false (got "${raw}")`);
    return truth ?? 'auto';
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (!allowed.includes(raw as T)) {
      problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
      return fallback;
    }
    return raw as T;
  };
  const url = (name: string, protocols: string[]): string | null => {
    const raw = read(name);
    if (raw === undefined) return null;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) throw new Error('protocol');
      return raw;
    } catch {
      problems.push(`${name} must be a URL with protocol ${protocols.join(' or ')}`);
      return null;
    }
  };
  const list = (name: string): string[] =>
    (read(name) ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  const email = (name: string, fallback: string): string => {
    const raw = read(name) ?? fallback;
    if (!/^[^\s@]+@[^\s@]+$/.test(raw)) problems.push(`${name} must be an e-mail address`);
    return raw.toLowerCase();
  };

  const nodeEnv = oneOf('NODE_ENV', ['development', 'production', 'test'] as const, 'development');
  const host = read('HOST') ?? '0.0.0.0';
  if (isIP(host) === 0 && host !== 'localhost') problems.push(`HOST must be an IP address or localhost`);

  let jwtSecret = read('JWT_SECRET');
  let jwtSecretGenerated = false;
  if (jwtSecret === undefined) {
    if (nodeEnv === 'production') problems.push('JWT_SECRET is required when NODE_ENV=production');
    jwtSecret = randomBytes(32).toString('hex');
    jwtSecretGenerated = true;
  } else if (jwtSecret.length < 16) {
    problems.push('JWT_SECRET must be at least 16 characters');
  }
  const jwtExpiresIn = read('JWT_EXPIRES_IN') ?? '8h';
  if (!/^\d+[smhd]?$/.test(jwtExpiresIn)) problems.push('JWT_EXPIRES_IN must look like 3600, 30m, 8h or 7d');

  const adminPassword = read('ADMIN_PASSWORD') ?? DEFAULT_ADMIN.password;
  if (adminPassword.length < 8) problems.push('ADMIN_PASSWORD must be at least 8 characters');

  const timezone = read('TIMEZONE') ?? 'UTC';
  if (!isValidTimeZone(timezone)) problems.push(`TIMEZONE must be an IANA time zone (got "${timezone}")`);

  const corsOrigins = list('CORS_ORIGINS');
  for (const origin of corsOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      problems.push(`CORS_ORIGINS entry "${origin}" must be * or an origin like https://app.example.com`);
    }
  }
  const envAllowlist = list('WORKFLOW_ENV_ALLOWLIST');
  for (const name of envAllowlist) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      problems.push(`WORKFLOW_ENV_ALLOWLIST entry "${name}" is not a variable name`);
  }

  const config: AppConfig = {
    port: int('PORT', 3000, 0, 65535),
    host,
    nodeEnv,
    databaseUrl: url('DATABASE_URL', ['postgres:', 'postgresql:']),
    databasePoolSize: int('DATABASE_POOL_SIZE', 10, 1, 1000),
    databaseListenUrl: url('DATABASE_LISTEN_URL', ['postgres:', 'postgresql:']),
    databasePreparedStatements: preparedStatementsMode(),
    databaseReplicaUrls: replicaUrlsOf(list('DATABASE_REPLICA_URLS'), problems),
    replicaMaxLagMs: int('REPLICA_MAX_LAG_MS', 5000, 100, 3_600_000),
    replicaPollMs: int('REPLICA_POLL_MS', 250, 50, 1000),
    databaseMigrate: bool('DATABASE_MIGRATE', true),
    dataDir: read('DATA_DIR') ?? './data',
    pgliteFsync: bool('PGLITE_FSYNC', true),
    pgliteOptimize: bool('PGLITE_OPTIMIZE', false),
    redisUrl: url('REDIS_URL', ['redis:', 'rediss:']),
    redisPrefix: read('REDIS_PREFIX') ?? 'fdws:',
    jwtSecret,
    jwtSecretGenerated,
    jwtExpiresIn,
    adminEmail: email('ADMIN_EMAIL', DEFAULT_ADMIN.email),
    adminPassword,
    adminName: read('ADMIN_NAME') ?? DEFAULT_ADMIN.name,
    adminDefaultsUsed: read('ADMIN_EMAIL') === undefined || read('ADMIN_PASSWORD') === undefined,
    registrationEnabled: bool('REGISTRATION_ENABLED', true),
    requireIfMatch: bool('REQUIRE_IF_MATCH', false),
    corsOrigins,
    trustProxy: trustProxyOf(read('TRUST_PROXY'), problems),
    passwordHashMemoryKib: int('PASSWORD_HASH_MEMORY_KIB', 19456, 64, 4_194_304),
    passwordHashIterations: int('PASSWORD_HASH_ITERATIONS', 2, 1, 100),
    throttleTtlMs: int('THROTTLE_TTL_MS', 60000, 1, 86_400_000),
    throttleLimit: int('THROTTLE_LIMIT', 100, 1, 10_000_000),
    throttleAuthLimit: int('THROTTLE_AUTH_LIMIT', 10, 1, 10_000_000),
    cacheEnabled: bool('CACHE_ENABLED', false),
    smtpUrl: url('SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: read('MAIL_FROM') ?? 'no-reply@localhost',
    adminNotifyEmail: read('ADMIN_NOTIFY_EMAIL') ?? null,
    workflowEnvAllowlist: envAllowlist,
    workflowEnvOrigins: workflowEnvOriginsOf(read('WORKFLOW_ENV_ORIGINS'), envAllowlist, problems),
    workflowApiAllowedHosts: list('WORKFLOW_API_ALLOWED_HOSTS').map((h) => h.toLowerCase()),
    workflowApiTimeoutMs: int('WORKFLOW_API_TIMEOUT_MS', 10000, 1, 60000),
    workflowPollMs: int('WORKFLOW_POLL_MS', 500, 50, 60000),
    workflowLeaseMs: int('WORKFLOW_LEASE_MS', 15000, 1000, 600000),
    workflowWorkers: int('WORKFLOW_WORKERS', 4, 0, 100),
    workflowRunRetentionDays: int('WORKFLOW_RUN_RETENTION_DAYS', 30, 1, 3650),
    recordTrashDays: int('RECORD_TRASH_DAYS', 30, 1, 3650),
    draftRetentionDays: int('DRAFT_RETENTION_DAYS', 90, 1, 36500),
    attachmentMaxBytes: int('ATTACHMENT_MAX_BYTES', 104_857_600, 1, 1_099_511_627_776),
    attachmentMaxRecordBytes: int('ATTACHMENT_MAX_RECORD_BYTES', 268_435_456, 1, 1_099_511_627_776),
    attachmentMaxFilesPerRecord: int('ATTACHMENT_MAX_FILES_PER_RECORD', 20, 1, 10_000),
    attachmentUploadsPerMinute: int('ATTACHMENT_UPLOADS_PER_MINUTE', 30, 1, 1_000_000),
    attachmentUnlinkedHours: int('ATTACHMENT_UNLINKED_HOURS', 24, 1, 8760),
    attachmentStore: oneOf('ATTACHMENT_STORE', ['auto', 'database', 'filesystem'] as const, 'auto'),
    attachmentDir: read('ATTACHMENT_DIR') ?? join(read('DATA_DIR') ?? './data', 'attachments'),
    notifyAttachmentsMaxBytes: int('NOTIFY_ATTACHMENTS_MAX_BYTES', 10_485_760, 0, 1_073_741_824),
    workflowMaxQueuedPerUser: int('WORKFLOW_MAX_QUEUED_PER_USER', 100, 1, 1_000_000),
    workflowMaxClaims: int('WORKFLOW_MAX_CLAIMS', 5, 1, 1000),
    workflowDbRetryMs: int('WORKFLOW_DB_RETRY_MS', 30_000, 0, 600_000),
    workflowTriggerMaxDepth: int('WORKFLOW_TRIGGER_MAX_DEPTH', 3, 1, 20),
    workflowTriggerMaxRunsPerEvent: int('WORKFLOW_TRIGGER_MAX_RUNS_PER_EVENT', 20, 1, 10_000),
    workflowTriggerMaxQueuedPerUser: int('WORKFLOW_TRIGGER_MAX_QUEUED_PER_USER', 100, 1, 1_000_000),
    outboxPollMs: int('OUTBOX_POLL_MS', 1000, 50, 600_000),
    outboxRetryBaseMs: int('OUTBOX_RETRY_BASE_MS', 1000, 10, 3_600_000),
    outboxRetryMaxMs: int('OUTBOX_RETRY_MAX_MS', 86_400_000, 0, 604_800_000),
    outboxLeaseMs: int('OUTBOX_LEASE_MS', 60_000, 1000, 3_600_000),
    eventsPollMs: int('EVENTS_POLL_MS', 500, 20, 600_000),
    eventsRetryBaseMs: int('EVENTS_RETRY_BASE_MS', 1000, 10, 3_600_000),
    eventsLeaseMs: int('EVENTS_LEASE_MS', 60_000, 1000, 3_600_000),
    eventsInterestGraceMs: int('EVENTS_INTEREST_GRACE_MS', 600_000, 1000, 86_400_000),
    webhookWorkers: int('WEBHOOK_WORKERS', 4, 0, 100),
    webhookPollMs: int('WEBHOOK_POLL_MS', 1000, 20, 600_000),
    webhookTimeoutMs: int('WEBHOOK_TIMEOUT_MS', 10_000, 1, 60_000),
    webhookLeaseMs: int('WEBHOOK_LEASE_MS', 60_000, 1000, 3_600_000),
    webhookRetryBaseMs: int('WEBHOOK_RETRY_BASE_MS', 5000, 10, 3_600_000),
    webhookRetryMaxMs: int('WEBHOOK_RETRY_MAX_MS', 259_200_000, 0, 2_592_000_000),
    webhookDisableAfterMs: int('WEBHOOK_DISABLE_AFTER_MS', 432_000_000, 0, 2_592_000_000),
    webhookSecretGraceMs: int('WEBHOOK_SECRET_GRACE_MS', 86_400_000, 0, 2_592_000_000),
    webhookDeliveryRetentionDays: int('WEBHOOK_DELIVERY_RETENTION_DAYS', 30, 1, 3650),
    idempotencyMaxAnswerBytes: int('IDEMPOTENCY_MAX_ANSWER_BYTES', 1_048_576, 1024, 67_108_864),
    bodyLimit: int('BODY_LIMIT', 1_048_576, 1024, 1_073_741_824),
    bodyMaxDepth: int('BODY_MAX_DEPTH', 64, 1, 1000),
    listMaxRows: int('LIST_MAX_ROWS', 1000, 1, 100_000),
    listMaxBytes: int('LIST_MAX_BYTES', 16_777_216, 1024, 1_073_741_824),
    exportRawCells: bool('EXPORT_RAW_CELLS', false),
    importMaxBytes: int('IMPORT_MAX_BYTES', 1_073_741_824, 1024, 68_719_476_736),
    importBatchRows: int('IMPORT_BATCH_ROWS', 1000, 1, 50_000),
    importStallMs: int('IMPORT_STALL_MS', 15_000, 100, 600_000),
    importLeaseMs: int('IMPORT_LEASE_MS', 60_000, 1000, 3_600_000),
    importRetentionDays: int('IMPORT_RETENTION_DAYS', 30, 1, 3650),
    timezone,
    defaultLocale: oneOf('DEFAULT_LOCALE', SUPPORTED_LOCALES, 'en'),
    logLevel: oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    metricsEnabled: bool('METRICS_ENABLED', true),
    metricsPort: read('METRICS_PORT') === undefined ? null : int('METRICS_PORT', 0, 0, 65535),
    metricsToken: read('METRICS_TOKEN') ?? null,
    aiProvider: (read('AI_PROVIDER') ?? 'infer').toLowerCase(),
    aiBaseUrl: (url('AI_BASE_URL', ['http:', 'https:']) ?? 'https://api.openai.com/v1').replace(/\/+$/, ''),
    aiApiKey: read('AI_API_KEY') ?? null,
    aiModel: read('AI_MODEL') ?? null,
    aiTimeoutMs: int('AI_TIMEOUT_MS', 60000, 1, 600_000),
  };
  if (config.webhookLeaseMs <= config.webhookTimeoutMs)
    problems.push(
      'WEBHOOK_LEASE_MS must be longer than WEBHOOK_TIMEOUT_MS (a claim must outlast its attempt)',
    );
  // `/metrics` names every workflow and counts every route: in production it must not be an anonymous
  // route of the public port.
  if (
    config.nodeEnv === 'production' &&
    config.metricsEnabled &&
    !config.metricsToken &&
    config.metricsPort === null
  )
    problems.push(
      'METRICS_TOKEN or METRICS_PORT is required when NODE_ENV=production and METRICS_ENABLED=true ' +
        '(/metrics must not be open to anyone on the main port); or set METRICS_ENABLED=false',
    );
  if (
    config.nodeEnv === 'production' &&
    (config.passwordHashMemoryKib < 19456 || config.passwordHashIterations < 2)
  )
    problems.push(
      "PASSWORD_HASH_MEMORY_KIB >= 19456 and PASSWORD_HASH_ITERATIONS >= 2 when NODE_ENV=production (OWASP's argon2id minimum)",
    );
  // Embedded PGlite has no replication: replicas named there would be a deployment mistake that
  // silently changes nothing, so the boot refuses it.
  if (config.databaseReplicaUrls.length > 0 && !config.databaseUrl)
    problems.push(
      'DATABASE_REPLICA_URLS needs DATABASE_URL (the primary): the embedded database (PGlite) has no replicas',
    );
  if (config.aiProvider === 'openai' && !config.aiModel)
    problems.push('AI_MODEL is required when AI_PROVIDER=openai');
  if (problems.length > 0) throw new ConfigValidationError(problems);
  return config;
}

/** Each replica URL a PostgreSQL URL; a problem per bad entry (its text is not repeated: it may hold a password). */
function replicaUrlsOf(entries: string[], problems: string[]): string[] {
  entries.forEach((entry, index) => {
    let protocol = '';
    try {
      protocol = new URL(entry).protocol;
    } catch {
      // reported below
    }
    if (protocol !== 'postgres:' && protocol !== 'postgresql:')
      problems.push(`DATABASE_REPLICA_URLS entry ${index + 1} must be a postgres:// URL`);
  });
  return entries;
}

export function isValidTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
