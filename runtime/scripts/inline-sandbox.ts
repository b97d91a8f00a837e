// Straight-line Server Scripts (straight-line.ts: no loop, function or call) run on the event loop thread, in the same
// QuickJS program the sandbox workers run (sandbox-worker-source.ts), with the same fresh context per call (the memory
// image copied back) and the same limits but 8 MB of memory. Handing a call to a worker thread and back costs more than
// the call itself (about 100 us of CPU against 40 us: messages, wake-ups, context switches), and a straight-line
// script's work is bounded by its length and its input, so it cannot hold the event loop. Any run that does not end
// well (an exception, a limit, a host call, a result too large) is void: the caller runs the script in a worker, which
// gives the outcome, and the script goes to the workers from then on. SCRIPT_INLINE=0 sends every script to the workers.
import { DEFAULT_LIMITS, type Reported, type ScriptLimits } from './sandbox-pool';
import { WORKER_SOURCE } from './sandbox-worker-source';
import { docMembers, isStraightLine } from './straight-line';

/** What the worker program exports when it runs inline. */
interface InlineProgram {
  ready(): Promise<void>;
  guestNames(): string[];
  runInline(job: {
    id: number;
    kind: 'run';
    source: string;
    filename: string;
    input: string;
    limits: ScriptLimits;
  }): Reported | undefined;
  /** Drops the compiled form of `source`. */
  forget(source: string): void;
}

/**
 * The limits of an inline run: the wall clock only (a straight-line script needs microseconds; the thread's CPU clock is
 * not read), and less memory, which also bounds what one native step (a string concatenation, a join) can touch.
 */
const INLINE_LIMITS: ScriptLimits = {
  ...DEFAULT_LIMITS,
  cpuMs: Number.MAX_SAFE_INTEGER,
  wallMs: 50,
  memoryBytes: 8 * 1024 * 1024,
};

/**
 * Scripts checked, by source: whether they run inline (false once a run was void) and the fields of `doc` they see
 * (undefined: the whole document).
 */
interface Verdict {
  inline: boolean;
  docFields?: string[];
}
const verdicts = new Map<string, Verdict>();
const MAX_VERDICTS = 1000;

let program: InlineProgram | undefined;
let denied: ReadonlySet<string> | undefined;
let loading: Promise<void> | undefined;

/** Loads the QuickJS program on this thread (once); until it is ready, scripts go to the workers. */
function load(): void {
  if (loading) return;
  const workerData: Record<string, unknown> = {
    inline: true,
    quickjs: require.resolve('quickjs-emscripten'),
    memoryBytes: INLINE_LIMITS.memoryBytes,
    stackBytes: INLINE_LIMITS.stackBytes,
    signal: new SharedArrayBuffer(24),
  };
  const shim = (name: string): unknown =>
    name === 'node:worker_threads'
      ? { parentPort: null, workerData, receiveMessageOnPort: () => undefined }
      : require(name);
  shim.resolve = require.resolve;
  try {
    // Our own constant program (the workers run it with `eval: true`).
    new Function('require', WORKER_SOURCE)(shim);
  } catch (err) {
    loading = Promise.resolve();
    process.stderr.write(`inline server scripts are off: ${String(err)}\n`);
    return;
  }
  const loaded = workerData.exports as InlineProgram;
  loading = loaded
    .ready()
    // Walking the guest's built-ins holds the event loop for a while too: a turn of its own.
    .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
    .then(
      () => {
        denied = new Set(loaded.guestNames());
        program = loaded;
        warmUp(loaded);
      },
      (err: unknown) => {
        process.stderr.write(`inline server scripts are off: ${String(err)}\n`);
      },
    );
}

/**
 * A script run WARM_UP_RUNS times after the load, a slice of at most WARM_UP_SLICE_MS per turn of the event loop. Fresh,
 * the program is slow: V8 runs the WebAssembly from its baseline compiler and the JavaScript around it unoptimised
 * until they are hot, and the first 3,000 calls or so cost 60-270 us each against 10-20 us after (measured with a
 * straight-line Before Save script). Warming it here, before scripts are called, keeps that cost out of requests.
 */
const WARM_UP_SOURCE =
  "if (doc.status === 'Open' && doc.priority !== 'High') doc.priority = 'Medium'; frappe.response.message = doc.description";
const WARM_UP_RUNS = 4000;
const WARM_UP_SLICE_MS = 2;

/** Settles when the warm-up of the loaded program has ended (undefined before a load). */
let warming: Promise<void> | undefined;

function warmUp(loaded: InlineProgram): void {
  let left = WARM_UP_RUNS;
  let done: () => void = () => undefined;
  warming = new Promise<void>((resolve) => (done = resolve));
  const input: ScriptInput = {
    doc: { status: 'Open', priority: 'Low', description: 'warm-up' },
    user: 'Guest',
  };
  const slice = (): void => {
    // A reloaded program (after a fault) is warmed by its own load.
    if (program !== loaded) return done();
    const end = performance.now() + WARM_UP_SLICE_MS;
    // Through runInline, so that the JavaScript around the guest call is warmed too.
    while (left > 0 && performance.now() < end) {
      left--;
      if (!runInline(WARM_UP_SOURCE, 'warm-up.js', input)) left = 0;
    }
    if (left > 0) {
      // Unreferenced: a process that is done otherwise does not wait for the warm-up.
      setImmediate(slice).unref();
      return;
    }
    loaded.forget(WARM_UP_SOURCE);
    done();
  };
  setImmediate(slice).unref();
}

/** The verdict on `source` (checked once per source text). */
function verdictOn(source: string, names: ReadonlySet<string>): Verdict {
  let verdict = verdicts.get(source);
  if (verdict === undefined) {
    if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
    const inline = isStraightLine(source, names);
    verdict = { inline, docFields: inline ? docMembers(source) : undefined };
    verdicts.set(source, verdict);
  }
  return verdict;
}

/** What a script is run with. */
export interface ScriptInput {
  form_dict?: Record<string, unknown>;
  /** The document (plain JSON values). */
  doc?: Record<string, unknown>;
  /** Read the global `conditions` back (permission queries). */
  conditions?: boolean;
  user: string;
}

/** The input as JSON, with only `fields` of the document when given. */
function inputJson(input: ScriptInput, fields: string[] | undefined): string {
  if (!fields || !input.doc) return JSON.stringify(input);
  const doc: Record<string, unknown> = {};
  for (const f of fields) if (Object.hasOwn(input.doc, f)) doc[f] = input.doc[f];
  return JSON.stringify({ ...input, doc });
}

/**
 * Runs a straight-line `source` with `input` on this thread. Undefined when the script must run in a worker: not
 * straight-line, inline off or not loaded yet, or a run that did not end well. The returned `doc` holds the fields the
 * script sees (docMembers), as they are after it.
 */
export function runInline(source: string, filename: string, input: ScriptInput): Reported | undefined {
  if (process.env.SCRIPT_INLINE === '0') return undefined;
  if (!program || !denied) {
    load();
    return undefined;
  }
  const verdict = verdictOn(source, denied);
  if (!verdict.inline) return undefined;
  const json = inputJson(input, verdict.docFields);
  const outcome = program.runInline({
    id: 0,
    kind: 'run',
    source,
    filename,
    input: json,
    limits: INLINE_LIMITS,
  });
  if (outcome?.ok) return outcome;
  verdicts.set(source, { inline: false });
  return undefined;
}

/**
 * Starts loading the inline program, unless SCRIPT_INLINE=0 (the service calls it when it finds a Server Script: at
 * start-up and when one is saved, so that the load, which holds the event loop for 50-90 ms in a few turns, happens
 * before the scripts are called rather than under them).
 */
export function preloadInline(): void {
  if (process.env.SCRIPT_INLINE !== '0') load();
}

/**
 * Loads the inline program unless SCRIPT_INLINE=0 and resolves once it is loaded and warmed up, waiting at most
 * `maxWarmMs` for the warm-up (the service waits for it when a Server Script is saved: the script then runs inline, at
 * full speed, from its first call).
 */
export async function inlineWarm(maxWarmMs: number): Promise<void> {
  if (process.env.SCRIPT_INLINE === '0') return;
  load();
  await loading;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([warming, new Promise<void>((resolve) => (timer = setTimeout(resolve, maxWarmMs)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Loads the inline program now and resolves when it is ready (tests; the service loads it on first use). */
export async function inlineReady(): Promise<ReadonlySet<string> | undefined> {
  load();
  await loading;
  return denied;
}
