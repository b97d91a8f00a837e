// The Prometheus metrics of a site (prom-client), served at /api/metrics: requests by route family (the route table's
// operation), verb and status, their latency, the database pool, database and Redis state, and background jobs by
// status. Process metrics (CPU, memory, event-loop lag, GC) come from one process-wide registry. Requests are tallied
// per request (request-tally.ts); the rest is read when scraped.
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { siteRedis } from '../redis/site-redis';
import { changeStampsOf } from '../query/result-cache';
import { RequestTally } from './request-tally';
import type { Site } from '../site';
import { SitePlugin } from '../site';
import { jobQueueOf } from '../jobs/job-queue';

/** The metrics one site updates as it serves. */
export interface SiteMetrics {
  registry: Registry;
  /** Requests by route family, verb and status, and their latency. */
  requests: RequestTally;
}

/** Latency buckets (seconds): a cached read takes ~0.5 ms here, a create a few ms, an outage answer up to seconds. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The knex pool's counts (tarn). */
interface PoolCounts {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

let processRegistry: Registry | undefined;

/** The process's registry of default metrics, made once: its collectors (GC observer, event-loop monitor) are global. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** The pool of the site's knex, when it has one. */
function poolOf(site: Site): PoolCounts | undefined {
  const pool = (site.db.knex.client as { pool?: Partial<PoolCounts> }).pool;
  return pool && typeof pool.numUsed === 'function' ? (pool as PoolCounts) : undefined;
}

/** The gauges read at scrape time. */
function addStateGauges(site: Site, registry: Registry): void {
  new Gauge({
    name: 'svc_db_pool_connections',
    help: 'Database pool connections by state (used, free) and requests waiting for one (pending)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const pool = poolOf(site);
      if (!pool) return;
      this.set({ state: 'used' }, pool.numUsed());
      this.set({ state: 'free' }, pool.numFree());
      this.set({ state: 'pending' }, pool.numPendingAcquires());
    },
  });
  new Gauge({
    name: 'svc_db_up',
    help: '1 while the database answers as requests last found it, 0 during an outage',
    registers: [registry],
    collect() {
      this.set(site.db.health.state.up ? 1 : 0);
    },
  });
  if (site.config.redisUrl)
    new Gauge({
      name: 'svc_redis_up',
      help: '1 while the Redis circuit breaker is closed, 0 while it is open (Redis failing)',
      registers: [registry],
      collect() {
        this.set(siteRedis(site)?.breaker.isOpen ? 0 : 1);
      },
    });
  if (site.db.changeCounter)
    new Gauge({
      name: 'svc_change_stamp_reads',
      help: 'Reads of the change counter made so far (MariaDB): each serves every remembered result asked before it began',
      registers: [registry],
      collect() {
        this.set(changeStampsOf(site)?.counterReads ?? 0);
      },
    });
  new Gauge({
    name: 'svc_jobs',
    help: 'Background jobs the job backend holds (the jobs table, or BullMQ), by status (queued, running, finished, failed)',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      this.reset();
      let counts: Record<string, number> | undefined;
      try {
        counts = await jobQueueOf(site)?.counts();
      } catch {
        return; // the database or Redis is down (svc_db_up, svc_redis_up say which)
      }
      for (const [status, n] of Object.entries(counts ?? {})) this.set({ status }, n);
    },
  });
}

/** The site's metrics registry and request tally. */
const METRICS = new SitePlugin<SiteMetrics>('metrics', (site) => {
  const registry = new Registry();
  const metrics = { registry, requests: new RequestTally(LATENCY_BUCKETS) };
  metrics.requests.register(registry);
  addStateGauges(site, registry);
  return metrics;
});

/** The site's metrics (made on first use). */
export function siteMetrics(site: Site): SiteMetrics {
  return METRICS.of(site);
}

/** The exposition text of the site's and the process's metrics. */
export async function metricsText(site: Site): Promise<string> {
  const [own, processWide] = await Promise.all([
    siteMetrics(site).registry.metrics(),
    processMetrics().metrics(),
  ]);
  return `${own}\n${processWide}`;
}

/** The content type of the exposition text. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;
