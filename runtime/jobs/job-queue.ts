// Background jobs: one interface for every backend (embedded: a jobs table and an in-process worker; BullMQ on Redis)
// and every kind of work (bulk operations now; scheduled server scripts, file clean-up later register their own kinds).
import type { Knex } from 'knex';
import type { SessionUser, Site } from '../site';
import { SitePlugin } from '../site';

/** Where a job is: waiting, being worked on, done (with a result) or given up (with an error). */
export type JobStatus = 'queued' | 'running' | 'finished' | 'failed';

/** A job as `GET /api/v2/job/{job_id}` shows it. */
export interface JobView {
  job_id: string;
  status: JobStatus;
  progress: { done: number; total: number };
  result: unknown;
  error: string | null;
}

/** A job as its queue stores it. */
export interface JobRecord {
  id: string;
  kind: string;
  /** The user the job runs as (the one who asked for it). */
  user: string;
  status: JobStatus;
  total: number;
  /** Items with a recorded outcome. */
  done: number;
  result: unknown;
  error: string | null;
}

/** What a job's handler is given: the site, the user (loaded when the job starts), its payload and its item store. */
export interface JobRun {
  site: Site;
  id: string;
  user: SessionUser;
  payload: unknown;
  items: JobItems;
}

/**
 * The per-item outcomes of a job. An outcome is recorded at most once per item (the store's key is the job and the
 * item's index): recorded inside the item's own write transaction, a second run of the same item cannot commit.
 */
export interface JobItems {
  /** Outcomes recorded by earlier runs of this job (after a crash or a graceful stop): those items are skipped. */
  done: ReadonlyMap<number, unknown>;
  /** Every outcome recorded so far (this run's and earlier runs'), read from the store. */
  all(): Promise<Map<number, unknown>>;
  /** Records an item's outcome inside `trx`, the transaction of the item's own write. */
  recordIn(trx: Knex, index: number, outcome: unknown): Promise<void>;
  /** Records an item's outcome in a transaction of its own (an item whose write was rolled back). */
  record(index: number, outcome: unknown): Promise<void>;
  /** True once the worker is shutting down: finish the current item(s), then return `REQUEUE`. */
  stopping(): boolean;
}

/** Returned by a handler that stopped early on `stopping()`: the job goes back to the queue and resumes later. */
export const REQUEUE = Symbol('requeue');

/** Runs a job: returns its result (stored, shown by the status endpoint) or REQUEUE; throwing fails the job. */
export type JobHandler = (run: JobRun) => Promise<unknown>;

/**
 * Where a job keeps its per-item outcomes, keyed by item index. The default is a __JobItem row per item
 * (job-runner.ts); a kind whose items leave a record of their own (an import's Data Import Log rows) makes that record
 * the outcome, so an item writes one row less. Whatever the store, a second outcome for an item must fail `recordIn`
 * (a unique key), so the item's write that carries it rolls back.
 */
export interface ItemStore {
  /** Every outcome recorded so far, by item index. */
  outcomes(): Promise<Map<number, unknown>>;
  /** How many items have an outcome (the job's progress). */
  count(): Promise<number>;
  /** Inserts an item's outcome in `trx`, the transaction of the item's own write. */
  recordIn(trx: Knex, index: number, outcome: unknown): Promise<void>;
  /** Inserts an item's outcome in `trx` unless the item has one (then nothing happens). */
  recordOnce(trx: Knex, index: number, outcome: unknown): Promise<void>;
  /** Called in `q` once the job has ended and its result holds the outcomes: a store of scratch rows drops them. */
  release(q: Knex): Promise<void>;
}

/** The job an item store serves: its id, the user it runs as and its payload (as enqueued). */
export interface StoredJob {
  id: string;
  user: string;
  payload: unknown;
}

/** Opens the item store of a job of one kind. */
export type ItemStoreOpener = (site: Site, job: StoredJob) => ItemStore;

/** What a kind of job registers: its handler and, optionally, its own item store. */
interface JobKind {
  handler: JobHandler;
  items?: ItemStoreOpener;
}

/** The kinds of job a queue can run, by name. */
const kinds = new Map<string, JobKind>();

/** Registers the handler of a kind of job (once per process, at module load), with its item store if it has one. */
export function registerJobKind(
  kind: string,
  handler: JobHandler,
  options: { items?: ItemStoreOpener } = {},
): void {
  kinds.set(kind, { handler, ...options });
}

/** The handler of a kind, if registered. */
export function jobHandler(kind: string): JobHandler | undefined {
  return kinds.get(kind)?.handler;
}

/** The item store a kind registered; undefined: the default one. */
export function jobItemStore(kind: string): ItemStoreOpener | undefined {
  return kinds.get(kind)?.items;
}

/** A job queue: enqueue work as a user, look a job up, run workers. */
export interface JobQueue {
  /** Queues a job of `kind` for `user` with `total` items; returns its id (a UUID). */
  enqueue(kind: string, user: string, payload: unknown, total: number): Promise<string>;
  /** The job, or undefined when unknown (or removed after its retention time). */
  get(id: string): Promise<JobRecord | undefined>;
  /** How many jobs the backend holds in each status (kept finished and failed ones included); for the metrics. */
  counts(): Promise<Record<JobStatus, number>>;
  /** Starts this process's worker (no-op when started). */
  start(): void;
  /** Stops the worker: running jobs finish their current items and go back to the queue; resolves when they have. */
  stop(): Promise<void>;
  /** Stops the worker and closes the queue's connections (the site is closing). */
  close(): Promise<void>;
}

/** The queue a site opened (bootstrap.ts sets it; its worker is closed there, before the plugins a job may use). */
const SITE_QUEUE = new SitePlugin<{ queue?: JobQueue }>('job queue', () => ({}));

/** Makes `queue` the site's job queue. */
export function setJobQueue(site: Site, queue: JobQueue): void {
  SITE_QUEUE.set(site, { queue });
}

/** The site's job queue; undefined on a site that opened none (one built by hand). */
export function jobQueueOf(site: Site): JobQueue | undefined {
  return SITE_QUEUE.peek(site)?.queue;
}
