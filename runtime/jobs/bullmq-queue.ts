// The BullMQ backend (REDIS_URL set): jobs live in a BullMQ queue on Redis, app processes only enqueue, and worker
// processes (`svc worker`, one or many, on any machine; or `svc serve --with-worker`) run them. Each item's outcome
// still goes to the site database (__JobItem) in the item's own write transaction, so a job BullMQ hands out again
// (its worker died and the lock ran out: "stalled") resumes after the items that have an outcome, and a worker that
// lost its lock stops at its next window: no item is applied twice, none skipped.
import { createHash, randomUUID } from 'node:crypto';
import { Queue, WaitingError, Worker, type Job, type JobType } from 'bullmq';
import Redis from 'ioredis';
import { onShutdown } from '../lifecycle/shutdown-hooks';
import { logger } from '../log/logger';
import { RedisBreaker } from '../redis/redis-breaker';
import type { Site } from '../site';
import { REQUEUE, type JobQueue, type JobRecord, type JobStatus } from './job-queue';
import { deleteItems, itemCount, jobErrorText, runClaimedJob } from './job-runner';

/** How the BullMQ backend runs. */
export interface BullQueueOptions {
  redisUrl: string;
  /** The key prefix of the queue in Redis (one per site: workers of a site must use the same one). */
  prefix: string;
  /** Jobs one worker process runs at once. */
  concurrency: number;
  /** BullMQ's lock duration: a dead worker's job is handed out again this long after its last renewal. */
  leaseMs: number;
  /** Finished and failed jobs are removed this long after they ended. */
  retentionMs: number;
}

/** What a BullMQ job carries: the kind, the user it runs as, the payload and its number of items. */
interface BullJobData {
  kind: string;
  user: string;
  payload: unknown;
  total: number;
}

/** The queue name under the prefix. */
const QUEUE_NAME = 'jobs';
/** Longest an enqueue or status read waits on Redis before it is 503. */
const REDIS_WAIT_MS = 2000;
/** How many times a job may be handed out again after its worker died before it fails (a job that kills workers). */
const MAX_STALLS = 20;

/** How often a worker looks for jobs whose lock ran out: a tenth of the lease, at least 100 ms. */
export function stalledCheckMs(leaseMs: number): number {
  return Math.max(100, Math.floor(leaseMs / 10));
}

/** The default queue prefix of a site: the same for every process on the same database. */
export function defaultQueuePrefix(databaseUrl: string): string {
  return `svc:${createHash('sha256').update(databaseUrl).digest('hex').slice(0, 16)}`;
}

/** BullMQ's job states as the status endpoint names them. */
function statusOf(state: string): JobStatus | undefined {
  if (state === 'active') return 'running';
  if (state === 'completed') return 'finished';
  if (state === 'failed') return 'failed';
  if (state === 'unknown') return undefined;
  return 'queued'; // waiting, delayed, prioritized, waiting-children
}

/** Rejects after `ms` (a Redis that is down or frozen must not hold a request). */
function within<T>(work: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    work,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('Redis did not answer in time')), ms).unref(),
    ),
  ]);
}

/** Resolves once the connection is ready (at once when it is; a new connection is still connecting), or rejects. */
function ready(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error('Redis is not connected'));
    }, ms);
    timer.unref();
    redis.once('ready', onReady);
  });
}

/** A site's jobs on BullMQ. */
export class BullJobQueue implements JobQueue {
  /** Names this process's worker. */
  readonly workerId = `${process.pid}:${randomUUID().slice(0, 8)}`;
  private producer: { queue: Queue; redis: Redis; breaker: RedisBreaker } | undefined;
  private worker: { worker: Worker; redis: Redis } | undefined;
  private stopping = false;
  private readonly lost = new Set<string>();
  private offShutdown: (() => void) | undefined;

  constructor(
    private readonly site: Site,
    private readonly options: BullQueueOptions,
  ) {}

  /** The producer side (enqueue, status), connected on first use. */
  private queue(): { queue: Queue; redis: Redis; breaker: RedisBreaker } {
    if (!this.producer) {
      // No offline queue: a command given while Redis is unreachable fails now; queued, it would run once Redis came
      // back, after the request had been answered 503 (a job enqueued that its requester was told was refused).
      const redis = new Redis(this.options.redisUrl, {
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        commandTimeout: REDIS_WAIT_MS,
        connectTimeout: REDIS_WAIT_MS,
      });
      const breaker = new RedisBreaker('background jobs', logger);
      breaker.watch(redis);
      const queue = new Queue(QUEUE_NAME, { connection: redis, prefix: this.options.prefix });
      queue.on('error', () => undefined); // the breaker logs the outage
      this.producer = { queue, redis, breaker };
    }
    return this.producer;
  }

  /** Runs a producer call within REDIS_WAIT_MS through the breaker: Redis down is 503 with Retry-After. */
  private call<T>(work: (queue: Queue) => Promise<T>): Promise<T> {
    const { queue, redis, breaker } = this.queue();
    return breaker.run(async () => {
      // Not chained: a call that timed out waiting for the connection must never be sent once it is back.
      await ready(redis, REDIS_WAIT_MS);
      return within(work(queue), REDIS_WAIT_MS);
    }, 'The job queue (Redis)');
  }

  async enqueue(kind: string, user: string, payload: unknown, total: number): Promise<string> {
    const id = randomUUID();
    const retention = { age: Math.max(1, Math.ceil(this.options.retentionMs / 1000)) };
    const data: BullJobData = { kind, user, payload, total };
    await this.call((queue) =>
      queue.add(kind, data, { jobId: id, attempts: 1, removeOnComplete: retention, removeOnFail: retention }),
    );
    return id;
  }

  async counts(): Promise<Record<JobStatus, number>> {
    const states: JobType[] = [
      'waiting',
      'delayed',
      'prioritized',
      'waiting-children',
      'active',
      'completed',
      'failed',
    ];
    const byState = await this.call((queue) => queue.getJobCounts(...states));
    const counts = { queued: 0, running: 0, finished: 0, failed: 0 };
    for (const [state, n] of Object.entries(byState)) {
      const status = statusOf(state);
      if (status) counts[status] += n;
    }
    return counts;
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const found = await this.call(async (queue) => {
      // The state first: a job read after its state was 'completed' holds its result (read the other way round, a job
      // finishing in between would show as finished with the result still missing).
      const state = await queue.getJobState(id);
      if (state === 'unknown') return undefined;
      const job = (await queue.getJob(id)) as Job<BullJobData> | undefined;
      return job ? { job, state } : undefined;
    });
    if (!found) return undefined;
    const { job, state } = found;
    const status = statusOf(state);
    if (!status || !job.data || typeof job.data.user !== 'string') return undefined;
    // Past its retention time: gone, even if BullMQ has not removed it yet (it removes old jobs as others end).
    if (job.finishedOn && job.finishedOn + this.options.retentionMs < Date.now()) {
      await this.call(() => job.remove()).catch(() => undefined);
      return undefined;
    }
    const total = Number(job.data.total);
    const progress = job.progress as { done?: unknown } | undefined;
    const done =
      status === 'finished'
        ? total
        : status === 'failed'
          ? Number(progress?.done ?? 0)
          : await itemCount(this.site, { id, ...job.data });
    return {
      id,
      kind: job.data.kind,
      user: job.data.user,
      status,
      total,
      done,
      result: status === 'finished' ? (job.returnvalue ?? null) : null,
      error: status === 'failed' ? job.failedReason || 'The job failed' : null,
    };
  }

  start(): void {
    if (this.worker) return;
    this.stopping = false;
    const redis = new Redis(this.options.redisUrl, { maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
    const worker = new Worker<BullJobData>(
      QUEUE_NAME,
      (job, token, signal) => this.process(job, token, signal),
      {
        connection: redis,
        prefix: this.options.prefix,
        concurrency: this.options.concurrency,
        lockDuration: this.options.leaseMs,
        // A dead worker's job goes back to waiting at the first stalled check after its lock ran out: checking every
        // tenth of the lease hands it out within 1.1 leases (checking once a lease took up to 3).
        stalledInterval: stalledCheckMs(this.options.leaseMs),
        maxStalledCount: MAX_STALLS,
      },
    );
    worker.on('stalled', (job) =>
      logger().warn(
        { event: 'job_taken_over', job },
        "job taken over: its worker's lease ran out (the worker died or stalled)",
      ),
    );
    worker.on('error', (err) =>
      logger().warn({ event: 'job_worker_error', err: err.message }, 'job worker: redis error'),
    );
    // A lock that could not be renewed may already be another worker's: this run stops at its next window.
    worker.on('lockRenewalFailed', (ids) => ids.forEach((id) => this.lost.add(id)));
    // The result holds every outcome now: the item rows are no longer needed.
    worker.on(
      'completed',
      (job) => void deleteItems(this.site, { id: String(job.id), ...job.data }).catch(() => undefined),
    );
    worker.on('failed', (job) => {
      if (job) void deleteItems(this.site, { id: String(job.id), ...job.data }).catch(() => undefined);
    });
    this.worker = { worker, redis };
    // SIGTERM: running jobs finish their current items and go back to the queue before the database closes.
    this.offShutdown = onShutdown(`jobs ${this.workerId}`, () => this.stop());
  }

  /** BullMQ's processor: runs the job; a graceful stop moves it back to waiting; a failure keeps its progress. */
  private async process(
    job: Job<BullJobData>,
    token: string | undefined,
    signal?: AbortSignal,
  ): Promise<unknown> {
    const id = String(job.id);
    this.lost.delete(id);
    const stopping = () => this.stopping || this.lost.has(id) || signal?.aborted === true;
    try {
      const { kind, user, payload } = job.data;
      const result = await runClaimedJob(this.site, { id, kind, user, payload }, stopping);
      if (result === REQUEUE) {
        if (!this.lost.has(id)) await job.moveToWait(token);
        throw new WaitingError();
      }
      return result ?? null;
    } catch (err) {
      if (err instanceof WaitingError) throw err;
      await job
        .updateProgress({ done: await itemCount(this.site, { id, ...job.data }), total: job.data.total })
        .catch(() => undefined);
      throw new Error(jobErrorText(err));
    } finally {
      this.lost.delete(id);
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.offShutdown?.();
    this.offShutdown = undefined;
    const worker = this.worker;
    this.worker = undefined;
    if (worker) {
      // Bounded: a worker whose Redis is gone cannot hand its job back; the lock runs out and BullMQ re-queues it.
      await within(worker.worker.close(), this.options.leaseMs + 5000).catch(() => undefined);
      worker.redis.disconnect();
    }
  }

  /** Stops the worker and closes the producer's connection (closing the site). */
  async close(): Promise<void> {
    await this.stop();
    const producer = this.producer;
    this.producer = undefined;
    if (producer) {
      producer.redis.removeAllListeners('close');
      await within(producer.queue.close(), REDIS_WAIT_MS).catch(() => undefined);
      producer.redis.disconnect();
    }
  }
}
