// Reader threads for SQLite reads that may be slow: each worker thread holds its own read-only better-sqlite3
// connection to the same WAL database, so a long count or scan runs beside the event loop instead of stopping it.
// Every read sent here has a time limit (site config max_query_time); past it the read is answered with
// QueryTimeoutError and its thread is terminated and replaced.
import { Worker } from 'node:worker_threads';
import { queryTimeout } from '../query-time';

/** What a reader thread answers: every row as a value list, the first column of every row, or that of the first row. */
export type ReadMode = 'raw' | 'pluck' | 'value';

// Plain JavaScript run by the worker (eval), so that it needs neither tsx nor the runtime bundle (see wal-checkpointer.ts).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
// Linux: this thread alone runs at a lower priority (workerData.nice, default 19: CFS weight 15 against the event loop's
// 1024), so that on a loaded or pinned core the event loop runs whenever it has work: a long read takes longer, the
// requests beside it do not. /proc/thread-self names this thread's task; setpriority on a tid sets that thread only.
if (workerData.nice > 0)
  try {
    const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
    if (tid > 0) require('node:os').setPriority(tid, workerData.nice);
  } catch {
    // elsewhere (or not allowed): the process's priority
  }
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = ' + workerData.busyMs);
if (workerData.cacheKb !== undefined) db.pragma('cache_size = ' + -Math.floor(workerData.cacheKb));
const statements = new Map();
parentPort.on('message', (m) => {
  try {
    let statement = statements.get(m.sql);
    if (!statement) {
      if (statements.size >= 500) statements.delete(statements.keys().next().value);
      statement = db.prepare(m.sql);
      statements.set(m.sql, statement);
    }
    let value;
    if (m.mode === 'raw') value = statement.raw(true).all(...m.bindings);
    else if (m.mode === 'pluck') value = statement.pluck(true).all(...m.bindings);
    else value = statement.pluck(true).get(...m.bindings);
    parentPort.postMessage({ id: m.id, value });
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: { message: String(err && err.message), code: err && err.code } });
  }
});
`;

interface Job {
  id: number;
  mode: ReadMode;
  sql: string;
  bindings: readonly unknown[];
  resolve(value: unknown): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
  slot?: Slot;
  done: boolean;
}

interface Slot {
  worker: Worker;
  job?: Job;
}

interface Answer {
  id: number;
  value?: unknown;
  error?: { message: string; code?: string };
}

/** An error the reader thread's connection threw, as better-sqlite3 would have thrown it on the event loop. */
class ReaderError extends Error {
  readonly code?: string;
  constructor(message: string, code?: string) {
    super(message);
    this.name = 'SqliteError';
    if (code) this.code = code;
  }
}

/** Options of a reader pool. */
export interface ReaderPoolOptions {
  /** The SQLite database file. */
  file: string;
  /** Reader threads at most (started on first use). */
  threads: number;
  /** The connections' busy_timeout, in ms. */
  busyMs: number;
  /** Linux: each thread's nice value (0-19; 0 leaves the process's). */
  nice?: number;
  /** Each connection's page cache, in KiB (PRAGMA cache_size; better-sqlite3's default when not given). */
  cacheKb?: number;
}

/**
 * A pool of reader threads. Threads start when a read needs one, up to `threads`; reads beyond that wait their turn
 * (their time limit counts from the call). A read past its limit is answered with QueryTimeoutError at once; its thread
 * is terminated (better-sqlite3 has no sqlite3_interrupt, so the statement itself ends in that thread before it exits)
 * and replaced, but never beyond twice `threads` threads alive, so that timed-out statements cannot pile up.
 */
export class ReaderPool {
  private readonly slots = new Set<Slot>();
  private readonly queue: Job[] = [];
  /** Terminated threads that have not exited yet (their statement still running). */
  private abandoned = 0;
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: ReaderPoolOptions) {}

  /** Threads alive (serving or idle) and terminated ones still finishing a statement; for tests and metrics. */
  get threads(): { live: number; abandoned: number } {
    return { live: this.slots.size, abandoned: this.abandoned };
  }

  /** Runs `sql` with `bindings` on a reader thread; rejects with QueryTimeoutError after `limitMs`. */
  run(mode: ReadMode, sql: string, bindings: readonly unknown[], limitMs: number): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the reader pool is closed'));
    return new Promise((resolve, reject) => {
      const job: Job = {
        id: this.nextId++,
        mode,
        sql,
        bindings,
        resolve,
        reject,
        done: false,
        timer: setTimeout(() => this.expire(job, limitMs), limitMs),
      };
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** Ends every thread; reads still waiting or running are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.finish(job, new Error('the reader pool is closed'));
    const exits: Promise<unknown>[] = [];
    for (const slot of [...this.slots]) {
      if (slot.job) this.finish(slot.job, new Error('the reader pool is closed'));
      this.slots.delete(slot);
      exits.push(slot.worker.terminate());
    }
    await Promise.all(exits);
  }

  private finish(job: Job, err: unknown, value?: unknown): void {
    if (job.done) return;
    job.done = true;
    clearTimeout(job.timer);
    if (job.slot) job.slot.job = undefined;
    job.slot = undefined;
    if (err) job.reject(err);
    else job.resolve(value);
  }

  private expire(job: Job, limitMs: number): void {
    if (job.done) return;
    const slot = job.slot;
    const index = this.queue.indexOf(job);
    if (index >= 0) this.queue.splice(index, 1);
    this.finish(job, queryTimeout(limitMs));
    if (slot) this.discard(slot);
    this.dispatch();
  }

  /** Terminates a thread whose read was abandoned; it counts until it has exited. */
  private discard(slot: Slot): void {
    if (!this.slots.delete(slot)) return;
    this.abandoned++;
    slot.worker.removeAllListeners('message');
    slot.worker.once('exit', () => {
      this.abandoned--;
      this.dispatch();
    });
    void slot.worker.terminate();
  }

  private spawn(): Slot | undefined {
    const { threads } = this.options;
    if (this.slots.size >= threads || this.slots.size + this.abandoned >= threads * 2) return undefined;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        file: this.options.file,
        driver: require.resolve('better-sqlite3'),
        busyMs: this.options.busyMs,
        nice: this.options.nice ?? 19,
        cacheKb: this.options.cacheKb,
      },
    });
    worker.unref();
    const slot: Slot = { worker };
    this.slots.add(slot);
    worker.on('message', (answer: Answer) => {
      const job = slot.job;
      if (!job || job.id !== answer.id) return;
      if (answer.error) this.finish(job, new ReaderError(answer.error.message, answer.error.code));
      else this.finish(job, undefined, answer.value);
      this.dispatch();
    });
    // A thread that fails (its connection could not open) fails its read; the next read starts a new thread.
    const lost = (err: unknown) => {
      if (!this.slots.delete(slot)) return;
      if (slot.job) this.finish(slot.job, err instanceof Error ? err : new Error('a reader thread exited'));
      this.dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', () => lost(new Error('a reader thread exited')));
    return slot;
  }

  private dispatch(): void {
    while (this.queue.length && !this.closed) {
      let slot: Slot | undefined;
      for (const s of this.slots)
        if (!s.job) {
          slot = s;
          break;
        }
      slot ??= this.spawn();
      if (!slot) return;
      const job = this.queue.shift() as Job;
      job.slot = slot;
      slot.job = job;
      slot.worker.postMessage({ id: job.id, mode: job.mode, sql: job.sql, bindings: job.bindings });
    }
  }
}
