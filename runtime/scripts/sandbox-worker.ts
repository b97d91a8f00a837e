// The sandbox worker thread (sandbox-pool.ts starts it from the bundle worker-bundle.ts makes of this file): it loads
// QuickJS once and runs each job in a context of its own, built before the job arrives and disposed after it, so nothing
// of one call reaches the next. Host calls block the thread (Atomics.wait) until the event loop answers, so the guest
// sees them as plain synchronous functions. The CPU budget is this thread's own CPU clock (Linux:
// /proc/thread-self/schedstat), so waiting for host calls or being descheduled is not charged; the wall clock outside
// host calls is the backstop. Imported on the event loop thread (the runtime bundle holds every module) it does nothing.
import { closeSync, openSync, readSync, readlinkSync } from 'node:fs';
import { isMainThread, parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { GuestContext, type Budget, type HostBridge } from './guest-context';
import { loadBoundedModule, type BoundedModule } from './quickjs-module';
import {
  CPU_START_OFFSET,
  EVENTS_OFFSET,
  tagOf,
  type DoneMessage,
  type HostCallMessage,
  type JobOutcome,
  type Reported,
  type ScriptLimits,
  type WorkerData,
  type WorkerJob,
} from './sandbox-protocol';

/** This thread's CPU clock in ms, read from schedstat (its first field: nanoseconds on a CPU); NaN without one. */
class ThreadClock {
  private readonly fd: number | undefined;
  private readonly buf = Buffer.alloc(64);
  /** The Linux thread id (0 when unknown). */
  readonly tid: number;

  constructor() {
    let fd: number | undefined;
    let tid = 0;
    try {
      fd = openSync('/proc/thread-self/schedstat', 'r');
      tid = Number(String(readlinkSync('/proc/thread-self')).split('/').pop()) || 0;
    } catch {
      fd = undefined;
    }
    this.fd = fd;
    this.tid = tid;
  }

  ms(): number {
    if (this.fd === undefined) return NaN;
    try {
      const n = readSync(this.fd, this.buf, 0, 64, 0);
      let ns = 0;
      for (let i = 0; i < n; i++) {
        const c = this.buf[i] as number;
        if (c < 48 || c > 57) break;
        ns = ns * 10 + (c - 48);
      }
      return ns / 1e6;
    } catch {
      return NaN;
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
  }
}

/**
 * The budget of a job: past limits.cpuMs of thread CPU, or limits.wallMs of wall time outside host calls. The CPU clock
 * is read only once the job has run cpuMs of wall time (it cannot have used more CPU than that), then every 5 ms.
 */
class JobBudget implements Budget {
  overLimit?: 'cpu' | 'wall';
  hostMs = 0;
  private readonly started = Date.now();
  private nextRead: number;

  constructor(
    private readonly limits: ScriptLimits,
    private readonly clock: ThreadClock,
    private readonly cpu0: number,
  ) {
    this.nextRead = this.started + limits.cpuMs;
  }

  interrupted(): boolean {
    if (this.overLimit) return true;
    const now = Date.now();
    const active = now - this.started - this.hostMs;
    if (active > this.limits.wallMs) this.overLimit = 'wall';
    else if (now >= this.nextRead) {
      this.nextRead = now + 5;
      const used = this.clock.ms() - this.cpu0;
      // Without a CPU clock, the wall time outside host calls stands in for it.
      if (Number.isNaN(used) ? active > this.limits.cpuMs : used > this.limits.cpuMs) this.overLimit = 'cpu';
    }
    return this.overLimit !== undefined;
  }
}

/** Serves jobs from the pool on this thread. */
function serve(data: WorkerData): void {
  const port = parentPort;
  if (!port) return;
  const signal = new Int32Array(data.signal, 0, 2);
  const cpuStart = new Float64Array(data.signal, CPU_START_OFFSET, 1);
  const events = new Int32Array(data.signal, EVENTS_OFFSET, 1);
  const clock = new ThreadClock();
  if (clock.tid > 0) Atomics.store(signal, 1, clock.tid);
  const limits = { stackBytes: data.stackBytes };
  let job: WorkerJob | undefined;
  let budget: JobBudget | undefined;
  let seq = 0;

  /** Tells a main thread waiting for the job what happened (its tag: done; minus its tag: a host call). */
  const tell = (value: number): void => {
    Atomics.store(events, 0, value);
    Atomics.notify(events, 0);
  };

  const bridge: HostBridge = (name, args, jobLimits) => {
    if (!job || !budget) return undefined;
    const mine = ++seq;
    const t0 = Date.now();
    Atomics.store(signal, 0, 0);
    port.postMessage({ t: 'host', id: job.id, seq: mine, name, args } satisfies HostCallMessage);
    tell(-tagOf(job.id));
    let reply: string | undefined;
    for (;;) {
      const left = jobLimits.hostWaitMs - (Date.now() - t0);
      if (left <= 0) break;
      Atomics.wait(signal, 0, 0, left);
      Atomics.store(signal, 0, 0);
      for (let msg = receiveMessageOnPort(data.replyPort); msg; msg = receiveMessageOnPort(data.replyPort)) {
        const m = msg.message as { seq: number; json: string };
        if (m.seq === mine) reply = m.json;
      }
      if (reply !== undefined) break;
    }
    budget.hostMs += Date.now() - t0;
    return reply ?? '{"timeout":true}';
  };

  let loaded: Promise<BoundedModule> = loadBoundedModule(data.memoryBytes, data.wasm);
  /** The context the next job runs in, built while the thread waits for it. */
  let spare: GuestContext | undefined;
  const fresh = (mod: BoundedModule): GuestContext => {
    const guest = spare ?? new GuestContext(mod, limits, bridge);
    spare = undefined;
    return guest;
  };
  void loaded.then(
    (mod) => (spare = new GuestContext(mod, limits, bridge)),
    () => undefined,
  );

  const runJob = (mod: BoundedModule, next: WorkerJob): Reported => {
    cpuStart[0] = clock.ms();
    job = next;
    budget = new JobBudget(next.limits, clock, cpuStart[0]);
    const guest = fresh(mod);
    let outcome: Reported;
    try {
      outcome =
        next.kind === 'compile'
          ? guest.compile(next.source, next.filename)
          : guest.run(next.source, next.filename, next.input, next.limits, budget);
    } finally {
      job = undefined;
    }
    const used = clock.ms() - (cpuStart[0] ?? NaN);
    if (!Number.isNaN(used)) outcome.cpuMs = used;
    // A module that ran out of memory keeps its grown memory: the pool ends this thread, which frees it (and the
    // context, which QuickJS may not free cleanly after a failed allocation).
    if (outcome.ok === false && outcome.kind === 'memory') outcome.spent = true;
    else {
      try {
        guest.dispose();
      } catch {
        // QuickJS found objects still alive when freeing the runtime: the next job starts on a fresh module.
        spare = undefined;
        loaded = loadBoundedModule(data.memoryBytes, data.wasm);
      }
    }
    return outcome;
  };

  port.on('message', (next: WorkerJob) => {
    const post = (outcome: Reported): void => {
      data.resultPort.postMessage({ t: 'done', id: next.id, outcome } satisfies DoneMessage);
      tell(tagOf(next.id));
    };
    loaded.then(
      (mod) => {
        let outcome: Reported;
        try {
          outcome = runJob(mod, next);
        } catch (e) {
          // Not a guest exception (a trap in the WebAssembly, a library error): the next job starts on a fresh module.
          spare = undefined;
          loaded = loadBoundedModule(data.memoryBytes, data.wasm);
          outcome = { ok: false, kind: 'script', message: `InternalError: ${String((e as Error)?.message)}` };
        }
        post(outcome);
        if (outcome.spent) return;
        // The next job's context, built now that this one's outcome is out.
        if (!spare)
          void loaded.then(
            (m) => (spare ??= new GuestContext(m, limits, bridge)),
            () => undefined,
          );
      },
      (e: unknown) => {
        loaded = loadBoundedModule(data.memoryBytes, data.wasm);
        const outcome: JobOutcome = {
          ok: false,
          kind: 'script',
          message: `QuickJS did not load: ${String((e as Error)?.message)}`,
        };
        post(outcome);
      },
    );
  });
}

if (!isMainThread && (workerData as { sandboxWorker?: boolean } | null)?.sandboxWorker === true)
  serve(workerData as WorkerData);
