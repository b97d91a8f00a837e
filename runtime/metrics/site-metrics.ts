// The Prometheus metrics of a site (prom-client), served at /api/metrics: requests by route family (the route table's
// operation), verb and status, their latency, the database pool, database and Redis state, and background jobs by
// status. Process metrics (CPU, memory, event-loop lag, GC) come from one process-wide registry. Requests are tallied
// per request (request-tally.ts); the rest is read when scraped.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { siteRedis } from '../redis/site-redis';
import { changeStampsOf } from '../query/result-cache';
import { replicaReadsOf } from '../query/replica-reads';
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

/** The read replicas' counters and gauges (site config read_replicas), when the site has replicas. */
function addReplicaMetrics(site: Site, registry: Registry): void {
  const replicas = replicaReadsOf(site);
  if (!replicas) return;
  new Counter({
    name: 'svc_db_replica_reads_total',
    help: 'List and count reads a read replica answered, by replica (host:port)',
    labelNames: ['replica'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of replicas.states()) this.inc({ replica: r.replica }, r.reads);
    },
  });
  new Counter({
    name: 'svc_db_replica_fallbacks_total',
    help: 'List and count reads the primary answered instead of a replica, by reason (lag: no replica had replayed the writes the request must see; down: no replica answered in time; query: a read the freshness check cannot cover; conflict: a replica cancelled the read for what it replays)',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, n] of Object.entries(replicas.fallbacks)) this.inc({ reason }, n);
    },
  });
  new Gauge({
    name: 'svc_db_replica_up',
    help: '1 while a read replica is in use, 0 while it is left out after failing to answer',
    labelNames: ['replica'],
    registers: [registry],
    collect() {
      for (const r of replicas.states()) this.set({ replica: r.replica }, r.up ? 1 : 0);
    },
  });
  new Gauge({
    name: 'svc_db_replica_lag_seconds',
    help: "Seconds a read replica's replay is behind its primary, as the replica reports it; -1 while it does not answer or is not replaying",
    labelNames: ['replica'],
    registers: [registry],
    async collect() {
      for (const r of await replicas.lags()) this.set({ replica: r.replica }, r.seconds ?? -1);
    },
  });
}

/** The site's metrics registry and request tally. */
const METRICS = new SitePlugin<SiteMetrics>('metrics', (site) => {
  const registry = new Registry();
  const metrics = { registry, requests: new RequestTally(LATENCY_BUCKETS) };
  metrics.requests.register(registry);
  addStateGauges(site, registry);
  addReplicaMetrics(site, registry);
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
