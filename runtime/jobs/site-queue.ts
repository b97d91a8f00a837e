// Which job backend a site uses and whether this process runs its worker: BullMQ when REDIS_URL is set (unless the
// site config says `job_backend: "embedded"`), else the embedded jobs table; the worker runs in `svc serve` by default
// only with the embedded backend (with BullMQ, `svc worker` processes run the jobs; `--with-worker` adds one).
import type { ServiceConfig } from '../config/config';
import { ValidationError } from '../errors/errors';
import type { Site } from '../site';
import { EmbeddedJobQueue } from './embedded-queue';
import type { JobQueue } from './job-queue';

/** The backend a configuration selects; a bad `job_backend`, or BullMQ without REDIS_URL, is refused at start. */
export function jobBackend(config: ServiceConfig): 'embedded' | 'bullmq' {
  const chosen: unknown = config.site.job_backend;
  if (chosen === null || chosen === undefined) return config.redisUrl ? 'bullmq' : 'embedded';
  if (chosen === 'embedded') return 'embedded';
  if (chosen === 'bullmq') {
    if (!config.redisUrl) throw new ValidationError('site config job_backend "bullmq" needs REDIS_URL');
    return 'bullmq';
  }
  throw new ValidationError('site config job_backend must be "embedded", "bullmq" or null');
}

/** True when this process should run the site's job worker (site config `job_worker`, null: only when embedded). */
export function runsJobWorker(config: ServiceConfig): boolean {
  const wanted = config.site.job_worker;
  if (wanted === null || wanted === undefined) return jobBackend(config) === 'embedded';
  return Boolean(wanted);
}

/** The site's job queue, configured from the site config (its worker not started). */
export function siteJobQueue(site: Site): JobQueue {
  const c = site.config.site;
  const common = {
    concurrency: Math.max(1, Math.trunc(c.job_concurrency) || 1),
    leaseMs: Math.max(100, c.job_lease_seconds * 1000),
    retentionMs: Math.max(0, c.job_retention_seconds * 1000),
  };
  if (jobBackend(site.config) === 'bullmq') {
    const prefix = c.job_queue_prefix;
    if (
      prefix !== null &&
      prefix !== undefined &&
      (typeof prefix !== 'string' || !/^[\w:.-]{1,100}$/.test(prefix))
    )
      throw new ValidationError('site config job_queue_prefix must be 1-100 letters, digits, and _ : . -');
    // BullMQ (with ioredis and msgpackr) is loaded only by a site that uses it: it costs tens of MB of memory.
    const { BullJobQueue, defaultQueuePrefix } = require('./bullmq-queue') as typeof import('./bullmq-queue');
    return new BullJobQueue(site, {
      ...common,
      redisUrl: String(site.config.redisUrl),
      prefix: prefix ?? defaultQueuePrefix(site.config.databaseUrl),
    });
  }
  return new EmbeddedJobQueue(site, { ...common, pollMs: Math.max(10, c.job_poll_ms) });
}
