// What the event loop and a sandbox worker thread say to each other: the limits of a script call, the job, the outcome,
// and the answer to a host call. Shared by sandbox-pool.ts (the event loop side) and sandbox-worker.ts.

/** Hard limits of one script call. */
export interface ScriptLimits {
  /**
   * CPU time of the worker thread the call may use (its thread's CPU clock: time spent waiting for host calls, or
   * descheduled on a busy machine, does not count).
   */
  cpuMs: number;
  /** The wall-clock backstop: time the call may take outside host calls, however little CPU it got. */
  wallMs: number;
  /**
   * Bytes of heap the guest may use: the QuickJS module's WebAssembly memory is capped at its initial size plus this
   * (quickjs-module.ts), so a script past it fails as "out of memory" and the process grows by at most this much.
   */
  memoryBytes: number;
  /** Bytes of native stack the guest may use (deep recursion ends in "stack overflow"). */
  stackBytes: number;
  /** Characters the result (JSON) and each host call's arguments may have. */
  maxResultBytes: number;
  /** Characters `frappe.log` may write per call (the rest is dropped). */
  maxLogBytes: number;
  /** Host calls (get_list, get_doc ...) per script call. */
  maxHostCalls: number;
  /** How long the guest waits for one host call. */
  hostWaitMs: number;
  /**
   * Grace beyond `cpuMs` (thread CPU) and `wallMs` after which the watchdog terminates the worker: one native call
   * (a huge Array.fill) is not interrupted by QuickJS, the watchdog ends it.
   */
  graceMs: number;
}

/** The defaults: 32 MB, 256 KB of stack, 1 s of CPU (10 s of wall clock outside host calls), 2 MB of result, 64 KB of log. */
export const DEFAULT_LIMITS: ScriptLimits = {
  cpuMs: 1000,
  wallMs: 10_000,
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 256 * 1024,
  maxResultBytes: 2 * 1024 * 1024,
  maxLogBytes: 64 * 1024,
  maxHostCalls: 10_000,
  hostWaitMs: 30_000,
  graceMs: 1000,
};

/** An error the host threw into the guest (frappe.throw, a refused host call). */
export interface HostErrorInfo {
  excType: string;
  status: number;
  message: string;
}

/** What a job ended with. */
export type JobOutcome =
  | {
      ok: true;
      json?: string;
      /** An inline run's result as values (inline-sandbox.ts), instead of json. */
      value?: { message?: unknown; doc?: unknown; conditions?: unknown };
      logs?: string[];
    }
  | { ok: false; kind: 'syntax'; error: { name: string; message: string; stack: string }; logs?: string[] }
  | { ok: false; kind: 'throw'; message: string; logs?: string[] }
  | { ok: false; kind: 'host'; error: HostErrorInfo; logs?: string[] }
  | { ok: false; kind: 'timeout'; limit: 'cpu' | 'wall'; logs?: string[] }
  | { ok: false; kind: 'memory'; logs?: string[] }
  | { ok: false; kind: 'script' | 'result' | 'killed'; message?: string; logs?: string[] };

/**
 * What the worker reports besides the outcome: the thread CPU time the job used, in ms (absent off Linux), and whether
 * the worker is spent (its QuickJS module ran out of memory: the pool ends the thread, which frees that memory).
 */
export type Reported = JobOutcome & { cpuMs?: number; spent?: boolean };

/** The answer to a host call, as the worker reads it (JSON text). */
export type HostReply = { ok: unknown } | { err: HostErrorInfo };

/** A job as the worker receives it. */
export interface WorkerJob {
  id: number;
  kind: 'run' | 'compile';
  source: string;
  filename: string;
  /** JSON text: form_dict, user, doc, conditions. */
  input: string;
  limits: ScriptLimits;
}

/** What the worker thread is started with. */
export interface WorkerData {
  /** [0]: the host-reply signal; [1]: the worker's Linux thread id; [2..3]: the job's CPU start (a Float64 at 8); [4]: events. */
  signal: SharedArrayBuffer;
  /** Where host-call answers arrive. */
  replyPort: import('node:worker_threads').MessagePort;
  /** Where outcomes go (the event loop may take one synchronously with receiveMessageOnPort). */
  resultPort: import('node:worker_threads').MessagePort;
  memoryBytes: number;
  stackBytes: number;
  /** QuickJS's compiled WebAssembly (quickjs-module.ts), shared by every thread. */
  wasm: import('./quickjs-module').WasmModule;
}

/** A message from the worker on its parent port: a host call. */
export interface HostCallMessage {
  t: 'host';
  id: number;
  seq: number;
  name: string;
  /** The arguments as a JSON array. */
  args: string;
}

/** A message from the worker on its result port: the job is done. */
export interface DoneMessage {
  t: 'done';
  id: number;
  outcome: Reported;
}

/** A job's tag in the shared event cell (a positive int32): minus the tag means "made a host call". */
export const tagOf = (id: number): number => (id % 1073741823) + 1;

/** Byte offsets in the shared signal buffer. */
export const SIGNAL_BYTES = 24;
export const CPU_START_OFFSET = 8;
export const EVENTS_OFFSET = 16;
