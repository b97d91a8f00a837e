// The sandbox pool: worker threads (sandbox-worker.ts) that run server scripts in QuickJS (WebAssembly), so a script
// burning its CPU budget never holds the event loop. Each job gets a fresh QuickJS runtime and context; its host calls
// come back here and run on the event loop (the worker waits for the answer). The CPU budget is the worker thread's own
// CPU time (Linux: /proc/.../schedstat); a watchdog terminates a worker whose job overstays its CPU budget or the
// wall-clock backstop, which is what ends a single native call QuickJS cannot interrupt. Memory is bounded per worker
// (its QuickJS memory is capped, quickjs-module.ts; a worker that ran out is ended) and the workers are bounded in
// number: top-level jobs start only while fewer than BASE_WORKERS are busy, each holding at most MAX_SCRIPT_DEPTH
// workers through nested calls, and at most MAX_IDLE are kept idle.
import { openSync, readSync, closeSync } from 'node:fs';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import {
  CPU_START_OFFSET,
  DEFAULT_LIMITS,
  EVENTS_OFFSET,
  SIGNAL_BYTES,
  tagOf,
  type DoneMessage,
  type HostCallMessage,
  type HostReply,
  type Reported,
  type ScriptLimits,
  type WorkerData,
  type WorkerJob,
} from './sandbox-protocol';
import { quickjsWasm } from './quickjs-module';
import { sandboxWorkerProgram } from './worker-bundle';

/** Answers one host call: resolves with the JSON-able value, or rejects with the error the guest should see. */
export type HostHandler = (name: string, args: unknown[]) => Promise<unknown>;

/** A job in the pool: what the worker receives, and how the pool answers its host calls and its caller. */
interface Job extends WorkerJob {
  host?: HostHandler;
  /** Turns a rejected host call into the reply the guest sees. */
  hostError?: (err: unknown) => HostReply;
  resolve(outcome: Reported): void;
  /** When the job started, and the time its host calls took (not counted against its CPU budget). */
  started?: number;
  hostMs?: number;
  /** When the host call under way began (undefined when none is). */
  hostSince?: number;
}

interface PoolWorker {
  worker: Worker;
  /** [0]: the host-reply signal; [1]: the worker thread's Linux thread id (0 until known or off Linux). */
  signal: Int32Array;
  /** [0]: the worker thread's CPU clock (ms) when its current job started (NaN off Linux). */
  cpuStart: Float64Array;
  /** [0]: what the worker last did for its job: its tag when the outcome was posted, minus its tag for a host call. */
  events: Int32Array;
  replies: MessagePort;
  /** Where the worker posts outcomes. */
  results: MessagePort;
  job?: Job;
  timer?: NodeJS.Timeout;
}

/** Worker threads kept for top-level calls; nested calls (a script saving a document that fires a script) add more. */
const BASE_WORKERS = 4;
/** Idle workers kept beyond the base after nested calls. */
const MAX_IDLE = 6;
/** The longest the event loop may be blocked waiting for one job (`waitMs`). */
const MAX_WAIT_MS = 5;

/** Runs script jobs on a pool of worker threads. */
export class SandboxPool {
  private readonly idle: PoolWorker[] = [];
  private readonly busy = new Set<PoolWorker>();
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly baseWorkers = BASE_WORKERS) {}

  /** Checks that `source` compiles; resolves with the outcome (kind `syntax` on a syntax error). */
  compile(source: string, filename: string, limits: ScriptLimits = DEFAULT_LIMITS): Promise<Reported> {
    return this.submit({ kind: 'compile', source, filename, input: '', limits }, false);
  }

  /**
   * Runs `source` with `input` (JSON text: form_dict, user, doc) in a fresh context. `nested` calls never wait in the
   * queue behind top-level ones (their parent holds a worker while it waits for them). `waitMs`: when an idle worker
   * takes the job at once, the event loop waits for it, blocked, up to this long (or until its first host call): for a
   * caller holding a write transaction, whose other writers wait for it anyway, the outcome then comes without a turn
   * of the event loop. Past that (a long or runaway script) the wait goes on asynchronously as for any job.
   */
  run(
    source: string,
    filename: string,
    input: string,
    host: HostHandler,
    hostError: (err: unknown) => HostReply,
    options: { nested?: boolean; limits?: ScriptLimits; waitMs?: number } = {},
  ): Promise<Reported> {
    return this.submit(
      { kind: 'run', source, filename, input, limits: options.limits ?? DEFAULT_LIMITS, host, hostError },
      options.nested === true,
      Math.min(options.waitMs ?? 0, MAX_WAIT_MS),
    );
  }

  private submit(spec: Omit<Job, 'id' | 'resolve'>, nested: boolean, waitMs = 0): Promise<Reported> {
    if (this.closed) return Promise.resolve({ ok: false, kind: 'killed', message: 'sandbox pool closed' });
    return new Promise<Reported>((resolve) => {
      const job: Job = { ...spec, id: this.nextId++, resolve };
      const idle = this.idle.pop();
      const worker = idle ?? (nested || this.busy.size < this.baseWorkers ? this.spawn() : undefined);
      if (!worker) return void this.queue.push(job);
      this.start(worker, job);
      // A new worker is still loading QuickJS: not worth blocking for.
      if (idle && waitMs > 0) this.waitBriefly(worker, job, waitMs);
    });
  }

  /** Blocks until `job` is done, makes a host call, or `ms` pass; a done job is settled here and now. */
  private waitBriefly(entry: PoolWorker, job: Job, ms: number): void {
    const tag = tagOf(job.id);
    const until = performance.now() + ms;
    for (;;) {
      const event = Atomics.load(entry.events, 0);
      if (event === tag) {
        const msg = receiveMessageOnPort(entry.results) as { message: DoneMessage } | undefined;
        if (msg) this.onMessage(entry, msg.message);
        return;
      }
      if (event === -tag) return;
      const left = until - performance.now();
      if (left <= 0) return;
      Atomics.wait(entry.events, 0, event, left);
    }
  }

  private spawn(): PoolWorker {
    const shared = new SharedArrayBuffer(SIGNAL_BYTES);
    const channel = new MessageChannel();
    const results = new MessageChannel();
    const workerData: WorkerData & { sandboxWorker: true; requireFrom: string } = {
      sandboxWorker: true,
      // Where the worker requires packages from (an eval'd worker's own require starts from the working directory).
      requireFrom: require.resolve('quickjs-emscripten'),
      memoryBytes: DEFAULT_LIMITS.memoryBytes,
      stackBytes: DEFAULT_LIMITS.stackBytes,
      wasm: quickjsWasm(),
      signal: shared,
      replyPort: channel.port2,
      resultPort: results.port2,
    };
    const worker = new Worker(sandboxWorkerProgram(), {
      eval: true,
      workerData,
      transferList: [channel.port2, results.port2],
      resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
    });
    channel.port1.unref();
    const entry: PoolWorker = {
      worker,
      signal: new Int32Array(shared, 0, 2),
      cpuStart: new Float64Array(shared, CPU_START_OFFSET, 1),
      events: new Int32Array(shared, EVENTS_OFFSET, 1),
      replies: channel.port1,
      results: results.port1,
    };
    results.port1.on('message', (msg: DoneMessage) => this.onMessage(entry, msg));
    worker.on('message', (msg: HostCallMessage) => this.onMessage(entry, msg));
    worker.on('error', () => this.lost(entry, 'the sandbox worker failed'));
    worker.on('exit', () => this.lost(entry, 'the sandbox worker exited'));
    // After the listeners (adding a 'message' listener refs a port again): an idle pool keeps no process alive.
    worker.unref();
    results.port1.unref();
    return entry;
  }

  private start(entry: PoolWorker, job: Job): void {
    entry.job = job;
    this.busy.add(entry);
    // A job under way keeps the process alive (an idle worker does not).
    entry.worker.ref();
    job.started = Date.now();
    const queuedAt = job.started;
    job.hostMs = 0;
    const { cpuMs, wallMs, graceMs } = job.limits;
    entry.timer = setInterval(
      () => {
        const now = Date.now();
        // A new worker still loading QuickJS (a busy machine) has not started the job: its clocks start when it does,
        // seen here within one tick. Until then only the host-call wait bounds it.
        if (entry.cpuStart[0] === Infinity) {
          job.started = now;
          if (now - queuedAt > job.limits.hostWaitMs) this.kill(entry, 'wall');
          return;
        }
        const inHost = (job.hostMs as number) + (job.hostSince === undefined ? 0 : now - job.hostSince);
        const active = now - (job.started as number) - inHost;
        if (active > wallMs + graceMs) return this.kill(entry, 'wall');
        // The thread cannot have used more CPU than the wall time since the job began.
        if (now - (job.started as number) <= cpuMs + graceMs) return;
        const used = threadCpuMs(Atomics.load(entry.signal, 1)) - (entry.cpuStart[0] ?? NaN);
        // Off Linux (no thread CPU clock) the wall clock outside host calls stands in for it.
        if (Number.isNaN(used) ? active > cpuMs + graceMs : used > cpuMs + graceMs) this.kill(entry, 'cpu');
      },
      Math.min(250, cpuMs + graceMs),
    );
    entry.timer.unref();
    Atomics.store(entry.events, 0, 0);
    // Until the worker starts the job (a new one may still be loading QuickJS), no CPU is charged to it.
    entry.cpuStart[0] = Infinity;
    const { id, kind, source, filename, input, limits } = job;
    entry.worker.postMessage({ id, kind, source, filename, input, limits } satisfies WorkerJob);
  }

  private onMessage(entry: PoolWorker, msg: HostCallMessage | DoneMessage): void {
    const job = entry.job;
    if (!job || msg.id !== job.id) return;
    if (msg.t === 'host') void this.answer(entry, job, msg.seq, msg.name, msg.args);
    else this.finish(entry, msg.outcome);
  }

  /** Runs a host call on the event loop and wakes the worker with the answer. */
  private async answer(
    entry: PoolWorker,
    job: Job,
    seq: number,
    name: string,
    argsJson: string,
  ): Promise<void> {
    let reply: HostReply;
    const began = Date.now();
    job.hostSince = began;
    try {
      const args = JSON.parse(argsJson) as unknown;
      if (!Array.isArray(args) || !job.host) throw new TypeError('bad host call');
      const value = await job.host(name, args);
      reply = { ok: value === undefined ? null : value };
    } catch (err) {
      reply = job.hostError
        ? job.hostError(err)
        : { err: { excType: 'ServerScriptError', status: 500, message: 'host call failed' } };
    }
    job.hostMs = (job.hostMs ?? 0) + (Date.now() - began);
    job.hostSince = undefined;
    if (entry.job !== job) return;
    let json: string;
    try {
      json = JSON.stringify(reply);
    } catch {
      json = JSON.stringify({
        err: { excType: 'ServerScriptError', status: 500, message: 'unserializable value' },
      });
    }
    entry.replies.postMessage({ seq, json });
    Atomics.store(entry.signal, 0, 1);
    Atomics.notify(entry.signal, 0);
  }

  private finish(entry: PoolWorker, outcome: Reported): void {
    const job = entry.job;
    if (!job) return;
    clearInterval(entry.timer);
    entry.job = undefined;
    this.busy.delete(entry);
    entry.worker.unref();
    job.resolve(outcome);
    if (!outcome.spent) return this.release(entry);
    // Its QuickJS module ran out of memory and keeps that memory: the thread ends, a new one takes the queue.
    void entry.worker.terminate();
    this.refill();
  }

  private release(entry: PoolWorker): void {
    const next = this.queue.shift();
    if (next) return this.start(entry, next);
    if (this.closed || this.idle.length >= MAX_IDLE) {
      void entry.worker.terminate();
      return;
    }
    this.idle.push(entry);
  }

  /** The watchdog: a job past its CPU budget or the wall-clock backstop (plus grace) loses its worker. */
  private kill(entry: PoolWorker, limit: 'cpu' | 'wall'): void {
    const job = entry.job;
    if (!job) return;
    entry.job = undefined;
    clearInterval(entry.timer);
    this.busy.delete(entry);
    job.resolve({ ok: false, kind: 'timeout', limit });
    void entry.worker.terminate();
    this.refill();
  }

  /** A worker died (crash, terminate): its job fails, the queue gets a fresh worker. */
  private lost(entry: PoolWorker, message: string): void {
    const idleAt = this.idle.indexOf(entry);
    if (idleAt >= 0) this.idle.splice(idleAt, 1);
    const job = entry.job;
    entry.job = undefined;
    clearInterval(entry.timer);
    if (this.busy.delete(entry)) this.refill();
    job?.resolve({ ok: false, kind: 'killed', message });
  }

  private refill(): void {
    if (this.closed) return;
    const next = this.queue.shift();
    if (next) this.start(this.spawn(), next);
  }

  /** Terminates the idle workers (a closing site; the next job starts new ones). */
  async shrink(): Promise<void> {
    const idle = this.idle.splice(0);
    await Promise.all(idle.map((e) => e.worker.terminate()));
  }

  /** Terminates every worker; later jobs fail at once. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.idle, ...this.busy];
    this.idle.length = 0;
    for (const job of this.queue.splice(0)) job.resolve({ ok: false, kind: 'killed', message: 'closed' });
    await Promise.all(all.map((e) => e.worker.terminate()));
  }
}

/**
 * The CPU clock (ms) of thread `tid` of this process, from /proc/self/task/<tid>/schedstat (nanoseconds on the CPU);
 * NaN when it cannot be read (not Linux, or the thread is gone).
 */
export function threadCpuMs(tid: number): number {
  if (!tid) return NaN;
  let fd: number | undefined;
  try {
    fd = openSync(`/proc/self/task/${tid}/schedstat`, 'r');
    const buf = Buffer.alloc(64);
    const n = readSync(fd, buf, 0, 64, 0);
    const ns = Number(/^\d+/.exec(buf.toString('latin1', 0, n))?.[0]);
    return Number.isFinite(ns) ? ns / 1e6 : NaN;
  } catch {
    return NaN;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

let shared: SandboxPool | undefined;

/** The process's sandbox pool (started on first use). */
export function sandboxPool(): SandboxPool {
  if (!shared) shared = new SandboxPool();
  return shared;
}

/** Terminates the pool's idle workers, if it was started (site shutdown). */
export async function shrinkSandboxPool(): Promise<void> {
  await shared?.shrink();
}
