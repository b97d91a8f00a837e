// The embedded job backend: jobs in the site database (__Job, with one __JobItem row per finished item) and a worker
// in the service's own process, so `npm start` alone runs jobs. A running job holds a lease it renews; a worker that
// dies (kill -9) stops renewing it, and any worker (this process after a restart, or another one) takes the job over
// once the lease has run out and resumes it after the items that already have an outcome.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Knex } from 'knex';
import { SYSTEM_TABLES } from '../db/migrate';
import { inWriteTransaction } from '../db/write-transaction';
import { onShutdown } from '../lifecycle/shutdown-hooks';
import { logger } from '../log/logger';
import type { Site } from '../site';
import { REQUEUE, jobItemStore, type JobQueue, type JobRecord, type JobStatus } from './job-queue';
import { deleteItems, itemCount, jobErrorText, runClaimedJob } from './job-runner';

const JOBS = SYSTEM_TABLES.jobs;
const ITEMS = SYSTEM_TABLES.jobItems;

/** How the embedded worker runs. */
export interface EmbeddedQueueOptions {
  /** Jobs this process runs at once. */
  concurrency: number;
  /** How often the worker looks for queued jobs (it also looks at once after an enqueue and after each job). */
  pollMs: number;
  /** How long a job stays claimed without a renewal (renewed every third of it); a dead worker's job waits this long. */
  leaseMs: number;
  /** Finished and failed jobs are deleted this long after they ended. */
  retentionMs: number;
}

/** How often finished jobs past their retention are swept. */
const SWEEP_EVERY_MS = 60_000;

/** The job store and worker of one site on its own database. */
export class EmbeddedJobQueue implements JobQueue {
  /** Names this process's worker in `__Job.worker`. */
  readonly workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private timer: NodeJS.Timeout | undefined;
  private readonly running = new Map<string, Promise<void>>();
  private stopping = false;
  private polling = false;
  private lastSweep = 0;
  private offShutdown: (() => void) | undefined;

  constructor(
    private readonly site: Site,
    private readonly options: EmbeddedQueueOptions,
  ) {}

  private write<T>(work: (q: Knex) => Promise<T>): Promise<T> {
    return inWriteTransaction(this.site.db, work);
  }

  async enqueue(kind: string, user: string, payload: unknown, total: number): Promise<string> {
    const id = randomUUID();
    await this.write((q) =>
      q(JOBS).insert({
        name: id,
        kind,
        user,
        status: 'queued',
        payload: JSON.stringify(payload),
        total,
        lease_until: 0,
        attempts: 0,
        created_at: Date.now(),
      }),
    );
    if (this.timer) setImmediate(() => void this.poll());
    return id;
  }

  async counts(): Promise<Record<JobStatus, number>> {
    const rows = (await this.site.db
      .knex(JOBS)
      .select('status')
      .count({ n: '*' })
      .groupBy('status')
      .timeout(1000)) as { status: string; n: number | string }[];
    const counts = { queued: 0, running: 0, finished: 0, failed: 0 };
    for (const row of rows) if (row.status in counts) counts[row.status as JobStatus] = Number(row.n);
    return counts;
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const knex = this.site.db.knex;
    // Not the payload: a job's items as sent (about 0.5 MB for 10,000 ToDos) read and copied at each status poll.
    const row = (await knex(JOBS)
      .where({ name: id })
      .first('kind', 'user', 'status', 'total', 'result', 'error')) as Record<string, unknown> | undefined;
    if (!row) return undefined;
    const status = String(row.status) as JobStatus;
    const total = Number(row.total);
    const kind = String(row.kind);
    const user = String(row.user);
    // The payload only for a kind whose item store is found through it (an import's: one short name).
    const payload = jobItemStore(kind)
      ? JSON.parse(
          String(((await knex(JOBS).where({ name: id }).first('payload')) as { payload: unknown }).payload),
        )
      : null;
    const done = status === 'finished' ? total : await itemCount(this.site, { id, kind, user, payload });
    return {
      id,
      kind,
      user,
      status,
      total,
      done,
      result: row.result == null ? null : JSON.parse(String(row.result)),
      error: row.error == null ? null : String(row.error),
    };
  }

  start(): void {
    if (this.timer) return;
    this.stopping = false;
    // SIGTERM: running jobs finish their current items and go back to the queue before the database closes.
    this.offShutdown = onShutdown(`jobs ${this.workerId}`, () => this.stop());
    this.timer = setInterval(() => void this.poll(), this.options.pollMs);
    this.timer.unref();
    void this.poll();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.offShutdown?.();
    this.offShutdown = undefined;
    this.stopping = true;
    await Promise.allSettled([...this.running.values()]);
  }

  async close(): Promise<void> {
    await this.stop();
  }

  /** Claims queued (or abandoned) jobs up to the concurrency limit and runs them. */
  private async poll(): Promise<void> {
    if (this.polling || !this.timer) return;
    this.polling = true;
    try {
      await this.sweep();
      while (this.timer && this.running.size < this.options.concurrency) {
        const id = await this.claim();
        if (!id) break;
        const done = this.execute(id).finally(() => {
          this.running.delete(id);
          if (this.timer) setImmediate(() => void this.poll());
        });
        this.running.set(id, done);
      }
    } catch {
      // The database is unavailable or busy: the next poll tries again.
    } finally {
      this.polling = false;
    }
  }

  /** A job that is queued, or running under a lease that ran out (its worker died), claimed for this worker. */
  private async claim(): Promise<string | undefined> {
    const now = Date.now();
    const claimable = (b: Knex.QueryBuilder) =>
      b
        .where('status', 'queued')
        .orWhere((r) => r.where('status', 'running').andWhere('lease_until', '<', now));
    const candidates = (await this.site.db
      .knex(JOBS)
      .where(claimable)
      .orderBy('created_at')
      .limit(this.options.concurrency + 4)
      .select('name', 'status', 'worker')) as { name: string; status: string; worker: string | null }[];
    for (const { name, status, worker } of candidates) {
      if (this.running.has(name)) continue;
      const claimed = await this.write((q) =>
        q(JOBS)
          .where({ name })
          .andWhere(claimable)
          .update({
            status: 'running',
            worker: this.workerId,
            lease_until: now + this.options.leaseMs,
            attempts: q.raw('attempts + 1'),
          }),
      );
      if (claimed !== 1) continue;
      if (status === 'running')
        logger().warn(
          { event: 'job_taken_over', job: name, from: worker },
          "job taken over: its worker's lease ran out (the worker died or stalled)",
        );
      return name;
    }
    return undefined;
  }

  /** Deletes finished and failed jobs past their retention time, with their item rows. */
  private async sweep(): Promise<void> {
    const now = Date.now();
    if (now - this.lastSweep < Math.min(SWEEP_EVERY_MS, this.options.retentionMs)) return;
    this.lastSweep = now;
    const before = now - this.options.retentionMs;
    await this.write(async (q) => {
      const old = (await q(JOBS)
        .whereIn('status', ['finished', 'failed'])
        .andWhere('finished_at', '<', before)
        .select('name')) as { name: string }[];
      if (!old.length) return;
      const names = old.map((r) => r.name);
      await q(ITEMS).whereIn('job', names).delete();
      await q(JOBS).whereIn('name', names).delete();
    });
  }

  /** Runs a claimed job as its user, renewing the lease, and stores how it ended. */
  private async execute(id: string): Promise<void> {
    const knex = this.site.db.knex;
    let lost = false;
    const mine = (q: Knex) => q(JOBS).where({ name: id, worker: this.workerId, status: 'running' });
    const heartbeat = setInterval(
      () => {
        this.write((q) => mine(q).update({ lease_until: Date.now() + this.options.leaseMs }))
          .then((n) => {
            if (n === 0) lost = true;
          })
          .catch(() => undefined);
      },
      Math.max(50, Math.floor(this.options.leaseMs / 3)),
    );
    heartbeat.unref();
    try {
      const row = (await knex(JOBS).where({ name: id }).first()) as Record<string, unknown>;
      const job = {
        id,
        kind: String(row.kind),
        user: String(row.user),
        payload: JSON.parse(String(row.payload)) as unknown,
      };
      const result = await runClaimedJob(this.site, job, () => this.stopping || lost);
      if (result === REQUEUE) {
        await this.write((q) => mine(q).update({ status: 'queued', worker: null, lease_until: 0 }));
        return;
      }
      await this.write(async (q) => {
        const ended = await mine(q).update({
          status: 'finished',
          result: JSON.stringify(result ?? null),
          finished_at: Date.now(),
          lease_until: 0,
        });
        if (ended === 1) await deleteItems(this.site, job, q);
      });
    } catch (err) {
      if (lost) return;
      await this.write((q) =>
        mine(q).update({
          status: 'failed',
          error: jobErrorText(err),
          finished_at: Date.now(),
          lease_until: 0,
        }),
      ).catch(() => undefined);
    } finally {
      clearInterval(heartbeat);
    }
  }
}
