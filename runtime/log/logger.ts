// The process's structured log: pino JSON lines on stdout, with secrets and bound values redacted wherever they sit.
import pino, { type Logger } from 'pino';

/** Paths pino censors in every log object (headers, bodies, credentials, SQL bindings). */
export const REDACT_PATHS = [
  'password',
  'pwd',
  'new_password',
  'api_secret',
  'secret',
  'token',
  'csrf_token',
  'sid',
  'bindings',
  'sql',
  'authorization',
  'cookie',
  '*.password',
  '*.pwd',
  '*.new_password',
  '*.api_secret',
  '*.secret',
  '*.token',
  '*.csrf_token',
  '*.sid',
  '*.bindings',
  '*.sql',
  '*.authorization',
  '*.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-frappe-csrf-token"]',
  'req.headers["x-svc-csrf-token"]',
  'res.headers["set-cookie"]',
];

/** Level of the process log: LOG_LEVEL, else `info` (`silent` inside jest workers, whose tests read logs themselves). */
function defaultLevel(): string {
  return process.env.LOG_LEVEL ?? (process.env.JEST_WORKER_ID ? 'silent' : 'info');
}

/** A logger writing JSON lines to `destination` (default stdout), redacting REDACT_PATHS. */
export function createLogger(options: { level?: string; destination?: pino.DestinationStream } = {}): Logger {
  return pino(
    {
      level: options.level ?? defaultLevel(),
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    // Synchronous: the lines are few (state changes, shutdown), and none may be lost to process.exit.
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

let shared: Logger | undefined;

/** The process-wide logger (created on first use). */
export function logger(): Logger {
  return (shared ??= createLogger());
}

/** Sends the process log to stderr from now on: a command whose stdout is its data (`svc export` with no --out). */
export function logToStderr(): void {
  shared = createLogger({ destination: pino.destination({ dest: 2, sync: true }) });
}

/** Replaces the process-wide logger (tests). */
export function setLogger(replacement: Logger): void {
  shared = replacement;
}
