// Straight-line Server Scripts (straight-line.ts: no loop, function or call) run on the event loop thread, in the same
// QuickJS program the sandbox workers run (sandbox-worker-source.ts), with the same fresh context per call (the memory
// image copied back) and the same limits but 8 MB of memory. Handing a call to a worker thread and back costs more than
// the call itself (about 100 us of CPU against 40 us: messages, wake-ups, context switches), and a straight-line
// script's work is bounded by its length and its input, so it cannot hold the event loop. Any run that does not end
// well (an exception, a limit, a host call, a result too large) is void: the caller runs the script in a worker, which
// gives the outcome, and the script goes to the workers from then on. SCRIPT_INLINE=0 sends every script to the workers.
// A good run's result depends on the script and its input alone, so a repeated input is answered from the result
// remembered for it, without a run (remember; docs/performance.md, Server Scripts).
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
    /** The input as parts (the host sets the sandbox's globals itself); `input` is what the guest would parse. */
    parts: InlineParts;
    limits: ScriptLimits;
  }): { ok: true; encoded: string; logs: string[] } | { ok: false } | undefined;
  /** Drops the compiled form of `source`. */
  forget(source: string): void;
  /** Whether the host reads results itself (hostEncode), when the layout allows; returns whether it now does. */
  hostReads(on: boolean): boolean;
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
  /** Each of docFields as the JSON text of its key and a colon (written once, not per run). */
  docKeys?: string[];
  /** Results remembered by input JSON (see remember); made on the first good run. */
  results?: Map<string, string>;
  /** Its runs in the sandbox and its answers from memory so far (remember gives up on inputs that seldom repeat). */
  runs?: number;
  recalled?: number;
}
const verdicts = new Map<string, Verdict>();
const MAX_VERDICTS = 1000;

/** SCRIPT_INLINE=0, read once: process.env is a lookup in C++ each time (0.3 us, on every run). */
const INLINE_OFF = process.env.SCRIPT_INLINE === '0';

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
      if (!runStraightLine(WARM_UP_SOURCE, 'warm-up.js', input, false)) left = 0;
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
    if (verdicts.size >= MAX_VERDICTS) {
      verdicts.clear();
      rememberedChars = 0;
    }
    const inline = isStraightLine(source, names);
    const docFields = inline ? docMembers(source) : undefined;
    verdict = { inline, docFields, docKeys: docFields?.map((f) => `${JSON.stringify(f)}:`) };
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

/**
 * What the guest's prepare() sets, as the host gives it (the sandbox builds the values itself when it can, without the
 * interpreter): the document's JSON, form_dict's JSON when it is truthy (prepare takes `form_dict || {}`), the user
 * (prepare takes `String(user || "Guest")`) and whether the result is to carry `conditions`.
 */
interface InlineParts {
  doc?: string;
  formDict?: string;
  user: string;
  conditions: boolean;
}

/**
 * The input's parts, with only `fields` of the document when given (`keys`: each as its JSON key and a colon): written
 * field by field (no copy of the document and no object spread), as JSON.stringify would write an object of those fields.
 */
function inputParts(
  input: ScriptInput,
  fields: string[] | undefined,
  keys: string[] | undefined,
): InlineParts {
  const doc = input.doc;
  let docJson: string | undefined;
  if (doc === undefined) docJson = undefined;
  else if (!fields || !keys) docJson = JSON.stringify(doc);
  else {
    docJson = '{';
    let sep = '';
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i] as string;
      if (!Object.hasOwn(doc, f)) continue;
      const value = JSON.stringify(doc[f]) as string | undefined;
      if (value === undefined) continue;
      docJson += `${sep}${keys[i] as string}${value}`;
      sep = ',';
    }
    docJson += '}';
  }
  return {
    doc: docJson,
    formDict: input.form_dict ? JSON.stringify(input.form_dict) : undefined,
    user: String(input.user || 'Guest'),
    conditions: !!input.conditions,
  };
}

/** The input JSON of `parts` (what the guest's prepare() reads; the key of remembered results). */
function inputJson(parts: InlineParts): string {
  let json = parts.formDict === undefined ? '{' : `{"form_dict":${parts.formDict},`;
  if (parts.doc !== undefined) json += `"doc":${parts.doc},`;
  if (parts.conditions) json += '"conditions":true,';
  return `${json}"user":${JSON.stringify(parts.user)}}`;
}

/** What a run produced: `frappe.response.message` and the globals `doc` and `conditions` (absent: none). */
export interface ScriptValues {
  message?: unknown;
  doc?: unknown;
  conditions?: unknown;
}

/**
 * Reads the encoded result of an inline run (encode in sandbox-worker-source.ts): the message, then `-` (no doc was
 * given) or the doc, then `-` or the conditions. A value is `s<length>:<chars>`, `n<number>;`, `t`, `f`, `z` (null), `u`
 * (left out, as JSON leaves out undefined and functions), `j<length>:<JSON text>`; the doc as a plain object is
 * `o<count>;` and per key `<length>:<key><value>`. The same values JSON.parse would give for the worker's JSON result.
 * Undefined when the text is not such an encoding, holds U+FFFD (a lone surrogate does not survive the UTF-8 crossing;
 * the worker's JSON escapes it), or has a __proto__ key: the run is then left to a worker.
 */
export function decodeResult(text: string): ScriptValues | undefined {
  if (text.includes('\ufffd')) return undefined;
  // Module-level functions over one cursor object, not closures: no functions are made per call.
  const at: Cursor = { text, p: 0, bad: false };
  const out: ScriptValues = {};
  const message = valueAt(at);
  if (message !== ABSENT) out.message = message;
  if (text[at.p] === '-') at.p++;
  else if (text[at.p] === 'o') {
    at.p++;
    const n = countAt(at, ';');
    const doc: Record<string, unknown> = {};
    for (let i = 0; i < n && !at.bad; i++) {
      const key = charsAt(at, countAt(at, ':'));
      if (key === '__proto__') return undefined;
      const v = valueAt(at);
      if (v !== ABSENT) doc[key] = v;
    }
    out.doc = doc;
  } else {
    const doc = valueAt(at);
    if (doc !== ABSENT) out.doc = doc;
  }
  if (text[at.p] === '-') at.p++;
  else {
    const conditions = valueAt(at);
    if (conditions !== ABSENT) out.conditions = conditions;
  }
  return at.bad || at.p !== text.length ? undefined : out;
}

/** Where decodeResult is in its text; `bad` once the text is not an encoding. */
interface Cursor {
  text: string;
  p: number;
  bad: boolean;
}

/** The decimal number ending at the next `end`, and the cursor past it. */
function countAt(at: Cursor, end: string): number {
  const stop = at.text.indexOf(end, at.p);
  let n = 0;
  for (let i = at.p; i < stop; i++) {
    const c = at.text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return ((at.bad = true), 0);
    n = n * 10 + c;
  }
  if (stop <= at.p) return ((at.bad = true), 0);
  at.p = stop + 1;
  return n;
}

/** The next `n` characters. */
function charsAt(at: Cursor, n: number): string {
  if (at.bad || at.p + n > at.text.length) return ((at.bad = true), '');
  const out = at.text.slice(at.p, at.p + n);
  at.p += n;
  return out;
}

/** The next value; ABSENT for `u`. */
function valueAt(at: Cursor): unknown {
  const text = at.text;
  switch (text[at.p++]) {
    case 's':
      return charsAt(at, countAt(at, ':'));
    case 'n': {
      const stop = text.indexOf(';', at.p);
      if (stop <= at.p) return ((at.bad = true), undefined);
      const n = Number(text.slice(at.p, stop));
      at.p = stop + 1;
      if (!Number.isFinite(n)) at.bad = true;
      return n;
    }
    case 't':
      return true;
    case 'f':
      return false;
    case 'z':
      return null;
    case 'u':
      return ABSENT;
    case 'j': {
      const json = charsAt(at, countAt(at, ':'));
      if (at.bad) return undefined;
      try {
        return JSON.parse(json) as unknown;
      } catch {
        return ((at.bad = true), undefined);
      }
    }
    default:
      return ((at.bad = true), undefined);
  }
}

const ABSENT = Symbol('absent');

/**
 * A good run's result is a function of the script and its input JSON alone: a straight-line script reads only `doc`,
 * `conditions` and `frappe` (no other global, no call, so no clock, no Math.random, no host call, no log line), and
 * every run starts from the same memory image, so the same input gives the same encoded result, byte for byte. An
 * inline script remembers up to REMEMBERED_PER_SCRIPT of them, by input JSON (the fields it names, form_dict, the
 * user), and a run with a remembered input is answered from it without entering the sandbox: nothing runs, so nothing
 * can carry over. Each answer is decoded afresh (the caller owns its values). Only short texts are kept (at most
 * REMEMBERED_CHARS for input and result together); a void run is never remembered (it may have hit the wall clock).
 * A Before Save rule over a field with few values (status, priority) runs once per value.
 */
const REMEMBERED_PER_SCRIPT = 64;
const REMEMBERED_CHARS = 1024;
/** All scripts' remembered texts together, at most (2 MB of strings). */
const REMEMBERED_TOTAL_CHARS = 1 << 20;
let rememberedChars = 0;
const REMEMBER_TRIAL_RUNS = 256;

function remember(verdict: Verdict, json: string, encoded: string): void {
  // Inputs that seldom repeat (a script reading the document's name): after REMEMBER_TRIAL_RUNS runs, a script answered
  // from memory less than once per 4 runs is not remembered any more (the texts kept would only be garbage later).
  const runs = (verdict.runs = (verdict.runs ?? 0) + 1);
  if (runs > REMEMBER_TRIAL_RUNS && (verdict.recalled ?? 0) * 4 < runs) return forgetResults(verdict);
  const chars = json.length + encoded.length;
  if (chars > REMEMBERED_CHARS || rememberedChars + chars > REMEMBERED_TOTAL_CHARS) return;
  const results = (verdict.results ??= new Map());
  if (results.size >= REMEMBERED_PER_SCRIPT) {
    // The oldest goes first (insertion order); hits do not reorder.
    const [oldJson, oldEncoded] = results.entries().next().value as [string, string];
    results.delete(oldJson);
    rememberedChars -= oldJson.length + oldEncoded.length;
  }
  results.set(json, encoded);
  rememberedChars += chars;
}

/** Forgets what `verdict` remembered (its script goes to the workers, or its inputs seldom repeat). */
function forgetResults(verdict: Verdict | undefined): void {
  if (!verdict?.results) return;
  for (const [json, encoded] of verdict.results) rememberedChars -= json.length + encoded.length;
  verdict.results = undefined;
}

/**
 * Runs a straight-line `source` with `input` on this thread. Undefined when the script must run in a worker: not
 * straight-line, inline off or not loaded yet, or a run that did not end well. The result is `value` (no JSON text);
 * its `doc` holds the fields the script sees (docMembers), as they are after it. A remembered input is answered
 * without a run (remember).
 */
export function runInline(source: string, filename: string, input: ScriptInput): Reported | undefined {
  return runStraightLine(source, filename, input, true);
}

/** runInline; `recall` false runs the script even when its input is remembered (the warm-up). */
function runStraightLine(
  source: string,
  filename: string,
  input: ScriptInput,
  recall: boolean,
): Reported | undefined {
  if (INLINE_OFF) return undefined;
  if (!program || !denied) {
    load();
    return undefined;
  }
  const verdict = verdictOn(source, denied);
  if (!verdict.inline) return undefined;
  const parts = inputParts(input, verdict.docFields, verdict.docKeys);
  const json = inputJson(parts);
  if (recall && verdict.results) {
    const known = verdict.results.get(json);
    if (known !== undefined) {
      const value = decodeResult(known);
      if (value) {
        verdict.recalled = (verdict.recalled ?? 0) + 1;
        return { ok: true, value, logs: [] };
      }
    }
  }
  const outcome = program.runInline({
    id: 0,
    kind: 'run',
    source,
    filename,
    input: json,
    parts,
    limits: INLINE_LIMITS,
  });
  if (outcome?.ok) {
    // The limit on the JSON result, applied to the encoded one: its JSON text is at most 6 times as long (a character
    // escaped as \uXXXX) and some structure; a result that might be over is left to a worker, which applies it exactly.
    const value =
      outcome.encoded.length * 6 + 64 <= INLINE_LIMITS.maxResultBytes
        ? decodeResult(outcome.encoded)
        : undefined;
    if (value) {
      if (recall && outcome.logs.length === 0) remember(verdict, json, outcome.encoded);
      return { ok: true, value, logs: outcome.logs };
    }
  }
  forgetResults(verdict);
  verdicts.set(source, { inline: false });
  return undefined;
}

/**
 * Starts loading the inline program, unless SCRIPT_INLINE=0 (the service calls it when it finds a Server Script: at
 * start-up and when one is saved, so that the load, which holds the event loop for 50-90 ms in a few turns, happens
 * before the scripts are called rather than under them).
 */
export function preloadInline(): void {
  if (!INLINE_OFF) load();
}

/**
 * Loads the inline program unless SCRIPT_INLINE=0 and resolves once it is loaded and warmed up, waiting at most
 * `maxWarmMs` for the warm-up (the service waits for it when a Server Script is saved: the script then runs inline, at
 * full speed, from its first call).
 */
export async function inlineWarm(maxWarmMs: number): Promise<void> {
  if (INLINE_OFF) return;
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

/**
 * Tests: whether the host reads an inline run's result from QuickJS's memory (the default, when the layout allows) or
 * the guest encodes it; returns whether the host now reads it. The two give the same text.
 */
export function inlineHostReads(on: boolean): boolean {
  return program?.hostReads(on) ?? false;
}
