/**
 * Whether named (server-side) prepared statements are kept: `true`, `false`, or `'auto'`, each
 * connection deciding for itself by whether it reaches the server directly (database/postgres-pool).
 */
export type PreparedStatementsMode = boolean | 'auto';

/** The typed, validated configuration of the whole service (docs/design.md section 2). */
export interface AppConfig {
  port: number;
  host: string;
  nodeEnv: 'development' | 'production' | 'test';
  databaseUrl: string | null;
  databasePoolSize: number;
  /** A direct PostgreSQL URL for the LISTEN session (not through a pooler in transaction mode). */
  databaseListenUrl: string | null;
  /**
   * Named (server-side) prepared statements: `auto` (the default) keeps them on connections that reach
   * the server directly and sends them unnamed through a pooler, so a transaction pooler works.
   */
  databasePreparedStatements: PreparedStatementsMode;
  /**
   * PostgreSQL streaming replicas (each direct or through its own pooler) that take the routed reads
   * (README "Read replicas"); empty = every read on the primary.
   */
  databaseReplicaUrls: string[];
  /** A replica further behind the primary than this gets no reads. */
  replicaMaxLagMs: number;
  /** How often the primary's WAL position and each replica's replayed position are read. */
  replicaPollMs: number;
  /** Apply pending migrations at boot (false: only check, `npm run migrate` applies them). */
  databaseMigrate: boolean;
  dataDir: string;
  /** Embedded PGlite: fsync every commit to disk before it is acknowledged (default true). */
  pgliteFsync: boolean;
  /** Embedded PGlite: let V8 optimise its hot code (faster queries, 55-90 MB more memory; default false). */
  pgliteOptimize: boolean;
  redisUrl: string | null;
  redisPrefix: string;
  jwtSecret: string;
  jwtSecretGenerated: boolean;
  jwtExpiresIn: string;
  adminEmail: string;
  adminPassword: string;
  adminName: string;
  adminDefaultsUsed: boolean;
  /** `POST /auth/register` is open to anyone; false = only admins create users (`POST /api/users`). */
  registrationEnabled: boolean;
  /** Writes to one record, configuration or workflow without If-Match answer 428 (README "Versions and conditional requests"). */
  requireIfMatch: boolean;
  corsOrigins: string[];
  /**
   * Which proxies' `X-Forwarded-For` entries are believed (Fastify's `trustProxy`): none (false), or
   * the listed proxy addresses and CIDR ranges. Never "every hop", never a bare hop count.
   */
  trustProxy: false | string[];
  /** argon2id cost of new password hashes (KiB of memory, passes). */
  passwordHashMemoryKib: number;
  passwordHashIterations: number;
  throttleTtlMs: number;
  throttleLimit: number;
  throttleAuthLimit: number;
  cacheEnabled: boolean;
  smtpUrl: string | null;
  mailFrom: string;
  adminNotifyEmail: string | null;
  workflowEnvAllowlist: string[];
  /**
   * For each allow-listed env name, the origins (`URL.origin`, or `*` for anywhere) its value may be
   * sent to by an outbound step (WORKFLOW_ENV_ORIGINS); a name without an entry may be sent nowhere.
   */
  workflowEnvOrigins: ReadonlyMap<string, readonly string[]>;
  workflowApiAllowedHosts: string[];
  workflowApiTimeoutMs: number;
  /** How often an idle instance looks for queued workflow runs. */
  workflowPollMs: number;
  /** How long a run belongs to the instance running it without a heartbeat. */
  workflowLeaseMs: number;
  /** Runs one instance works on at once (asynchronous and resumed runs). */
  workflowWorkers: number;
  workflowRunRetentionDays: number;
  /** Days a deleted record stays restorable in the trash before it is purged. */
  recordTrashDays: number;
  /** Days a draft may stay unchanged before it goes to the trash (README "Drafts"). */
  draftRetentionDays: number;
  /** Attachments (README "Attachments"): largest file, most bytes and files per record, uploads per user per minute. */
  attachmentMaxBytes: number;
  attachmentMaxRecordBytes: number;
  attachmentMaxFilesPerRecord: number;
  attachmentUploadsPerMinute: number;
  /** Hours an upload no record refers to is kept before the cleanup removes it. */
  attachmentUnlinkedHours: number;
  /**
   * Where attachment bytes live (README "Attachments"): `database` (rows of attachment_blob_chunks),
   * `filesystem` (a file per blob under attachmentDir), or `auto`: the filesystem beside an embedded
   * database, the database on a PostgreSQL server.
   */
  attachmentStore: 'auto' | 'database' | 'filesystem';
  /** The filesystem store's folder (ATTACHMENT_DIR, default DATA_DIR/attachments). */
  attachmentDir: string;
  /** Total bytes of the files one `notify` mail may attach (NOTIFY_ATTACHMENTS_MAX_BYTES). */
  notifyAttachmentsMaxBytes: number;
  workflowMaxQueuedPerUser: number;
  /** Claims after which a run that fails to run every time (a poison run) ends `failed`. */
  workflowMaxClaims: number;
  /** How long a run retries its own writes while the database is unreachable (connection lost, restart). */
  workflowDbRetryMs: number;
  /** Longest chain of workflow triggers: a run at this depth triggers no further run. */
  workflowTriggerMaxDepth: number;
  /** Most triggered runs one root event (a change made outside any triggered run) may cause. */
  workflowTriggerMaxRunsPerEvent: number;
  /** Queued and running triggered runs one run-as user may have at once (apart from their own queue bound). */
  workflowTriggerMaxQueuedPerUser: number;
  /** How often an instance looks for due effects in the workflow outbox. */
  outboxPollMs: number;
  /** The wait before an effect's second attempt; it doubles with each attempt (at most 5 minutes). */
  outboxRetryBaseMs: number;
  /** How long after its run committed to it an effect is still retried; then it is `failed`. */
  outboxRetryMaxMs: number;
  /** How long a claimed effect is its sender's; a sender that died is replaced after it. */
  outboxLeaseMs: number;
  /** How often an instance looks for domain events (record changes, finished runs) to hand out. */
  eventsPollMs: number;
  /** The wait before a batch of events a consumer failed on is handed out again; doubles (at most 1 minute). */
  eventsRetryBaseMs: number;
  /** How long a claimed batch of events is its dispatcher's; a dispatcher that died is replaced after it. */
  eventsLeaseMs: number;
  /** An event interest nobody wants is removed once declared longer ago than this. */
  eventsInterestGraceMs: number;
  /** Webhook deliveries one instance sends at once (`0`: it sends none). */
  webhookWorkers: number;
  /** How often an instance looks for due webhook deliveries (retries, other instances' events). */
  webhookPollMs: number;
  /** Limit of one delivery attempt (connect, send, answer). */
  webhookTimeoutMs: number;
  /** How long a claimed delivery is its sender's (above the timeout); a sender that died is replaced after it. */
  webhookLeaseMs: number;
  /** The wait before a delivery's second attempt; doubles with each attempt (at most 1 hour). */
  webhookRetryBaseMs: number;
  /** How long after it was queued a delivery is still retried; then it is `failed`. */
  webhookRetryMaxMs: number;
  /** A subscription whose deliveries failed for this long without one success is disabled. */
  webhookDisableAfterMs: number;
  /** How long the previous secret still signs (a second signature) after a rotation. */
  webhookSecretGraceMs: number;
  /** Days sent and failed deliveries (and their attempts) are kept. */
  webhookDeliveryRetentionDays: number;
  idempotencyMaxAnswerBytes: number;
  bodyLimit: number;
  bodyMaxDepth: number;
  /** Records (and groups) one list answer may hold: paging `limit`, grid `take`, a grid without `take`. */
  listMaxRows: number;
  /** Bytes of stored record documents (`data`, `computedResults` as JSON text) one list answer may hold. */
  listMaxBytes: number;
  /**
   * CSV and XLSX cells as stored: text a spreadsheet would evaluate (`=`, `+`, `-`, `@`, tab, CR
   * first) is not given its leading `'`. For exports read by programs, never by spreadsheets.
   */
  exportRawCells: boolean;
  /** The largest file an import takes, in bytes (the file is streamed, never held whole). */
  importMaxBytes: number;
  /** Rows per statement while an import stages and stores its rows. */
  importBatchRows: number;
  /** How long a workbook may give no sheet or row once its upload has ended before it is unreadable. */
  importStallMs: number;
  /** How long an instance holds an import it works on before another may take it over. */
  importLeaseMs: number;
  /** Days a finished import (with its refusals) is kept after it finished. */
  importRetentionDays: number;
  timezone: string;
  defaultLocale: 'en' | 'hu';
  logLevel: string;
  /** Prometheus metrics at `/metrics` (or on `metricsPort`), optionally behind a bearer token. */
  metricsEnabled: boolean;
  metricsPort: number | null;
  metricsToken: string | null;
  /** The configuration-draft provider of `/api/ai` (`infer` built in, `openai`, or a custom one). */
  aiProvider: string;
  aiBaseUrl: string;
  /** Never logged, never answered. */
  aiApiKey: string | null;
  aiModel: string | null;
  aiTimeoutMs: number;
}

export const APP_CONFIG = Symbol('APP_CONFIG');
