// createRequestLog: with System Settings `log_api_requests` on, one `API Request Log` row per API request, written in
// batches after the response (path without query string, verb, user, status, duration, IP; never credentials).
import { randomBytes } from 'node:crypto';
import type { Middleware } from 'koa';
import { clientIp } from '../auth/client-ip';
import { cachedSettings, loadSettings } from '../auth/settings';
import { inWriteTransaction } from '../db/write-transaction';
import { serviceStamps } from '../document/service-row';
import type { AppContext } from '../http/state';
import type { Site } from '../site';
import { SitePlugin } from '../site';

const LOG_DOCTYPE = 'API Request Log';
/** A batch is written when it reaches this size, or after FLUSH_MS. */
const BATCH_SIZE = 100;
const FLUSH_MS = 250;
/** Past this many unwritten rows (database down), new rows are dropped rather than kept in memory. */
const MAX_PENDING = 10_000;

interface LogQueue {
  rows: Record<string, unknown>[];
  timer?: NodeJS.Timeout;
  /** The write in progress, awaited by flushRequestLog. */
  writing: Promise<void>;
  /** Requests whose row is still being prepared (settings read), awaited by flushRequestLog. */
  preparing: Set<Promise<void>>;
}

/** The site's queue of log rows, written out when the site closes. */
export const REQUEST_LOG = new SitePlugin<LogQueue>(
  'request log',
  () => ({ rows: [], writing: Promise.resolve(), preparing: new Set() }),
  (queue, site) => flush(site, queue).catch(() => undefined),
);

function queueOf(site: Site): LogQueue {
  return REQUEST_LOG.of(site);
}

/** One transaction per batch, inserted by the row store (rows share their columns). */
async function writeRows(site: Site, table: string, rows: Record<string, unknown>[]): Promise<void> {
  await inWriteTransaction(site.db, (trx) => site.rows.insertRows(trx, table, rows));
}

function write(site: Site, queue: LogQueue): Promise<void> {
  if (queue.timer) clearTimeout(queue.timer);
  queue.timer = undefined;
  const rows = queue.rows.splice(0);
  if (!rows.length) return queue.writing;
  const table = site.registry.get(LOG_DOCTYPE)?.meta.tableName;
  queue.writing = queue.writing
    .then(() => (table ? writeRows(site, table, rows) : undefined))
    .catch(() => undefined); // logging never fails a request, nor takes the process down
  return queue.writing;
}

/** Writes every queued log row of the site now (tests, shutdown). */
export async function flushRequestLog(site: Site): Promise<void> {
  const queue = REQUEST_LOG.peek(site);
  if (queue) await flush(site, queue);
}

async function flush(site: Site, queue: LogQueue): Promise<void> {
  await Promise.all(queue.preparing);
  await write(site, queue);
}

function enqueue(site: Site, row: Record<string, unknown>): void {
  const queue = queueOf(site);
  if (queue.rows.length >= MAX_PENDING) return;
  queue.rows.push(row);
  if (queue.rows.length >= BATCH_SIZE) void write(site, queue);
  else if (!queue.timer) {
    queue.timer = setTimeout(() => void write(site, queue), FLUSH_MS);
    queue.timer.unref();
  }
}

/** Names of log rows: unique per process start, cheaper than random bytes per request. */
const NAME_PREFIX = randomBytes(6).toString('hex');
let counter = 0;

function enqueueRow(ctx: AppContext, started: number): void {
  const { site } = ctx.state;
  const user = ctx.state.user?.name ?? 'Guest';
  enqueue(site, {
    name: `${NAME_PREFIX}${(counter++).toString(36).padStart(8, '0')}`,
    ...serviceStamps(user),
    path: ctx.path.slice(0, 1000),
    method: ctx.method.slice(0, 16),
    user,
    status: ctx.status,
    duration: Math.round((performance.now() - started) * 1000) / 1000,
    ip: clientIp(ctx).slice(0, 140),
  });
}

const isOn = (settings: Record<string, unknown>) => Number(settings.log_api_requests) === 1;

async function record(ctx: AppContext, started: number): Promise<void> {
  if (isOn(await loadSettings(ctx.state.site))) enqueueRow(ctx, started);
}

/** Logs every `/api/` request when `log_api_requests` is on; the write is queued, never awaited by the response. */
export function createRequestLog(): Middleware {
  return function requestLog(ctx, next) {
    if (!ctx.state.path.startsWith('/api/')) return next();
    // Off (the default) and known to be off: nothing to time or wrap.
    const known = cachedSettings(ctx.state.site);
    if (known && !isOn(known)) return next();
    return logged(ctx, next);
  };
}

/** Runs the request and queues its log row once the response is decided. */
async function logged(ctx: AppContext, next: () => Promise<unknown>): Promise<void> {
  const started = performance.now();
  try {
    await next();
  } finally {
    const state = ctx.state;
    if (state.site.registry.get(LOG_DOCTYPE)) {
      // Settings are nearly always cached: decide at once; only a cache miss waits for the read, off the response.
      const settings = cachedSettings(state.site);
      if (settings) {
        try {
          if (isOn(settings)) enqueueRow(ctx, started);
        } catch {
          // logging never fails a request
        }
      } else {
        const { preparing } = queueOf(state.site);
        const pending = record(ctx, started)
          .catch(() => undefined)
          .finally(() => preparing.delete(pending));
        preparing.add(pending);
      }
    }
  }
}
