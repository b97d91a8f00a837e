// Configuration: environment variables and the site config file, resolved once at start.
import { readFileSync, existsSync } from 'node:fs';
import { ValidationError } from '../errors/errors';

/** Site configuration keys (SITE_CONFIG JSON). */
export interface SiteConfig {
  ignore_csrf: boolean;
  allowed_referrers: string[];
  bulk_operation_async_threshold: number | Record<string, number>;
  developer_mode: boolean;
  max_body_size: number;
  max_file_size: number;
  max_page_length: number;
  /** Most child rows one document may hold (all its tables together); more is 413. */
  max_child_rows: number;
  /** Items one bulk request may carry (413 above). */
  max_bulk_items: number;
  server_script_enabled: boolean;
  /** The IANA time zone Scheduler Event scripts' cron expressions are read in (default UTC, as stored datetimes). */
  time_zone?: string;
  /** How often `All` Scheduler Event scripts run, in seconds (rounded to whole minutes; default 240, as Frappe). */
  scheduler_interval?: number;
  trusted_proxies: string[];
  /** Send the responses finished in one event-loop turn together (see middleware/write-coalescing.ts). */
  coalesce_writes: boolean;
  /** The site's base URL (`https://id.example.com`): the OpenID issuer; without it the request's host is used. */
  host_name?: string;
  /** Seconds an issued OAuth access token lives (default 3600). */
  oauth_access_token_lifetime?: number;
  /** Seconds an issued OAuth refresh token lives (default 30 days). */
  oauth_refresh_token_lifetime?: number;
  /**
   * List pages and counts remembered until a table they read changes (SQLite: the database; MariaDB: the change counter
   * of each table, across processes): at most this many results; 0 remembers none.
   */
  result_cache_entries: number;
  /** Approximate bytes (the rows' JSON text) the remembered results may hold at most. */
  result_cache_bytes: number;
  /** Longest a database statement may run (ms, MariaDB) before the request is 503. */
  db_statement_timeout: number;
  /**
   * Longest a list or count query may run (ms) before it is cancelled with 503 QueryTimeoutError: on MariaDB by the
   * server (max_statement_time), on SQLite for the reads sent to reader threads (those the query plan says may be slow).
   */
  max_query_time: number;
  /**
   * SQLite: reader threads (each with its own connection) for reads that may be slow; started on first use. 0: none,
   * every read runs on the event loop (and is not timed).
   */
  reader_threads: number;
  /**
   * SQLite, Linux: the nice value of each reader thread (0-19; set per thread, the event loop keeps the process's), so
   * that on a busy core the event loop thread is scheduled ahead of a long read. 0 leaves them at the process's.
   */
  reader_nice: number;
  /**
   * SQLite: the page cache of each connection (PRAGMA cache_size, in KiB: the writer, the event loop's reader, each
   * reader thread and the WAL checkpointer). better-sqlite3's own default is 16000 KiB per connection, which lets RSS
   * grow with the tables; the OS page cache still holds the file.
   */
  sqlite_cache_kb: number;
  /** Longest a request waits for a pooled connection, or a new one to connect (ms), before it is 503. */
  db_acquire_timeout: number;
  /**
   * Replicas of DATABASE_URL (URLs of the same kind) that answer list and count reads once they have replayed every
   * write acknowledged before the request (MariaDB, PostgreSQL; refused on SQLite).
   */
  read_replicas: string[];
  /**
   * Longest a replica may take to connect, lend a pooled connection or say how far it has replayed (ms) before the
   * primary answers in its place.
   */
  read_replica_timeout: number;
  /** Longest a write waits on another's lock (ms: SQLite busy_timeout, MariaDB innodb_lock_wait_timeout) before 503. */
  db_busy_timeout: number;
  /** Longest a client may take to send a request's headers (ms; Node's headersTimeout). */
  headers_timeout: number;
  /** Longest a client may take to send a whole request (ms; Node's requestTimeout). */
  request_timeout: number;
  /** How long an idle keep-alive connection stays open (ms; Node's keepAliveTimeout). */
  keep_alive_timeout: number;
  /** Longest a SIGTERM/SIGINT shutdown takes, whatever the clients do (ms). */
  shutdown_timeout: number;
  /** Log one JSON line per request (request id, verb, path, status, ms, user). */
  access_log: boolean;
  /** Roles whose users may read /api/metrics (Administrator always may); `Guest` opens it to everyone. */
  metrics_roles: string[];
  /**
   * Whether Guests may read the API description: the OpenAPI documents (every DocType, method and API script name) and
   * the /api/docs page. Default false: signed-in users only (a Guest's document is 401, its page a sign-in).
   */
  openapi_public: boolean;
  /**
   * Run background jobs in this process too (`svc serve`): null (the default) runs them with the embedded backend and
   * leaves them to `svc worker` processes with BullMQ; `svc serve --with-worker` is true.
   */
  job_worker: boolean | null;
  /** Where jobs live: null (the default) is BullMQ on REDIS_URL when it is set, else the embedded jobs table. */
  job_backend: 'embedded' | 'bullmq' | null;
  /** BullMQ's key prefix (every process of a site must use the same one); null: `svc:` + a hash of DATABASE_URL. */
  job_queue_prefix: string | null;
  /** Jobs one worker process runs at once. */
  job_concurrency: number;
  /** How often the embedded worker looks for queued jobs, in milliseconds. */
  job_poll_ms: number;
  /** How long a running job stays claimed without its worker renewing the claim (a dead worker's job waits this long;
   * BullMQ's lock duration). */
  job_lease_seconds: number;
  /** How long finished and failed jobs (and their status) are kept. */
  job_retention_seconds: number;
  /** How long the document event log keeps an event (hours): SSE clients further behind get `event: reset`. */
  event_retention_hours: number;
  /**
   * How often an open socket or event stream checks its credentials again (ms): one whose session was logged out or
   * expired, whose token was revoked or whose key was regenerated is closed at the next check.
   */
  realtime_recheck_ms: number;
  /** Sockets and event streams one user may hold open on one process (Guests: per address); more is 429. */
  max_realtime_connections_per_user: number;
  /** The site's name: the socket.io namespace `/<site_name>` (default: the Host header without its port). */
  site_name?: string;
  /** `svc serve` migrates the schema at start; false: it refuses to start while a change is pending. */
  auto_migrate: boolean;
  /** Seconds before each retry of a failed webhook delivery (default [300, 1800, 7200, 18000, 36000, 36000]). */
  webhook_retry_schedule?: number[];
  /** Hosts, addresses and CIDR ranges webhooks may reach although loopback, private or link-local. */
  webhook_allowed_hosts?: string[];
  /** The key secrets kept for later use (webhook secrets) are encrypted with; unset: kept as given. */
  encryption_key?: string;
}

/** Everything the service reads from its environment. */
export interface ServiceConfig {
  port: number;
  host: string;
  databaseUrl: string;
  redisUrl?: string;
  adminPassword: string;
  /** True when ADMIN_PASSWORD was not set and the default is in use. */
  adminPasswordDefaulted: boolean;
  site: SiteConfig;
  /** The site folder holding uploaded files (`files/`, `private/files/`); FILES_PATH, default `./data`. */
  filesPath?: string;
}

/** Site config defaults (CONTRACT.md section 2). */
export const DEFAULT_SITE_CONFIG: SiteConfig = {
  ignore_csrf: false,
  allowed_referrers: [],
  bulk_operation_async_threshold: 20,
  developer_mode: false,
  max_body_size: 10 * 1024 * 1024,
  max_file_size: 25 * 1024 * 1024,
  max_page_length: 1000,
  max_child_rows: 10_000,
  max_bulk_items: 10_000,
  server_script_enabled: true,
  trusted_proxies: [],
  coalesce_writes: true,
  result_cache_entries: 1000,
  result_cache_bytes: 4_000_000,
  db_statement_timeout: 8000,
  max_query_time: 5000,
  reader_threads: 2,
  reader_nice: 19,
  sqlite_cache_kb: 2048,
  db_acquire_timeout: 5000,
  read_replicas: [],
  read_replica_timeout: 1000,
  db_busy_timeout: 5000,
  headers_timeout: 20_000,
  request_timeout: 60_000,
  keep_alive_timeout: 5000,
  shutdown_timeout: 10_000,
  access_log: false,
  metrics_roles: ['System Manager'],
  openapi_public: false,
  job_worker: null,
  job_backend: null,
  job_queue_prefix: null,
  job_concurrency: 2,
  job_poll_ms: 1000,
  job_lease_seconds: 30,
  job_retention_seconds: 7 * 24 * 3600,
  event_retention_hours: 24,
  realtime_recheck_ms: 15_000,
  max_realtime_connections_per_user: 100,
  auto_migrate: true,
};

/** Reads a site config file; a missing optional file gives the defaults. */
export function loadSiteConfig(file: string | undefined, required: boolean): SiteConfig {
  if (!file || (!required && !existsSync(file))) return { ...DEFAULT_SITE_CONFIG };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ValidationError(`site config ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ValidationError(`site config ${file} must be a JSON object`);
  }
  const config = { ...DEFAULT_SITE_CONFIG, ...(parsed as Partial<SiteConfig>) };
  if (config.time_zone !== undefined && !isTimeZone(config.time_zone))
    throw new ValidationError(
      `site config ${file}: time_zone must be an IANA time zone such as "Europe/Berlin"`,
    );
  for (const key of ['result_cache_entries', 'result_cache_bytes'] as const)
    if (!Number.isSafeInteger(config[key]) || config[key] < 0)
      throw new ValidationError(`site config ${file}: ${key} must be a whole number, 0 or more`);
  if (!Number.isSafeInteger(config.reader_nice) || config.reader_nice < 0 || config.reader_nice > 19)
    throw new ValidationError(
      `site config ${file}: reader_nice must be a whole number from 0 to 19, got ${JSON.stringify(config.reader_nice)}`,
    );
  if (
    !Number.isSafeInteger(config.sqlite_cache_kb) ||
    config.sqlite_cache_kb < 64 ||
    config.sqlite_cache_kb > 1_048_576
  )
    throw new ValidationError(
      `site config ${file}: sqlite_cache_kb must be a whole number of KiB from 64 to 1048576, got ${JSON.stringify(config.sqlite_cache_kb)}`,
    );
  for (const key of ['realtime_recheck_ms', 'max_realtime_connections_per_user'] as const)
    if (!Number.isSafeInteger(config[key]) || config[key] < 1)
      throw new ValidationError(
        `site config ${file}: ${key} must be a whole number, 1 or more, got ${JSON.stringify(config[key])}`,
      );
  if (!Array.isArray(config.read_replicas) || config.read_replicas.some((url) => typeof url !== 'string'))
    throw new ValidationError(`site config ${file}: read_replicas must be a list of database URLs`);
  if (!Number.isSafeInteger(config.read_replica_timeout) || config.read_replica_timeout < 1)
    throw new ValidationError(
      `site config ${file}: read_replica_timeout must be a whole number of ms, 1 or more, got ${JSON.stringify(config.read_replica_timeout)}`,
    );
  return config;
}

/** True when `value` names a time zone this Node.js knows. */
function isTimeZone(value: unknown): boolean {
  if (typeof value !== 'string' || !value) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/** Resolves the service configuration from environment variables (all optional). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const port = Number(env.PORT ?? 8000);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ValidationError(`PORT must be a port number, got ${env.PORT}`);
  return {
    port,
    host: env.HOST ?? '127.0.0.1',
    databaseUrl: env.DATABASE_URL ?? 'sqlite:./data/site.sqlite',
    ...(env.REDIS_URL ? { redisUrl: env.REDIS_URL } : {}),
    adminPassword: env.ADMIN_PASSWORD ?? 'admin',
    adminPasswordDefaulted: env.ADMIN_PASSWORD === undefined,
    site: loadSiteConfig(env.SITE_CONFIG ?? './site_config.json', env.SITE_CONFIG !== undefined),
    filesPath: env.FILES_PATH ?? './data',
  };
}
