// Straight-line Server Scripts (straight-line.ts: no loop, function or call) run on the event loop thread, in a QuickJS
// context of the event loop's own (guest-context.ts) with a 50 ms wall clock and 8 MB of memory. Handing a call to a
// worker thread and back, in a context built for it, costs far more than the call itself, and a straight-line script's
// work is bounded by its length and its input, so it cannot hold the event loop. The context is reused: such a script
// can name only `frappe`, `doc`, `conditions` and its own locals, reach no built-in object (every built-in's name is
// denied) and call nothing, and the three globals are made afresh for each call and removed after it; the host
// functions, the only objects two calls share, are frozen. Any run that does not end well (an exception, a limit, a
// host call, a result too large) is void: the caller runs the script in a worker, which gives the outcome, the script
// goes to the workers from then on, and the context is rebuilt. SCRIPT_INLINE=0 sends every script to the workers.
import { GuestContext, type Budget, type HostBridge } from './guest-context';
import { guestNames } from './guest-names';
import { loadBoundedModule, quickjsWasm, type BoundedModule } from './quickjs-module';
import { DEFAULT_LIMITS, type Reported, type ScriptLimits } from './sandbox-protocol';
import { docMembers, isStraightLine } from './straight-line';

/**
 * The limits of an inline run: the wall clock only (a straight-line script needs microseconds; the thread's CPU clock is
 * not read), and less memory, which also bounds what one native step (a string concatenation) can touch.
 */
const INLINE_LIMITS: ScriptLimits = {
  ...DEFAULT_LIMITS,
  cpuMs: Number.MAX_SAFE_INTEGER,
  wallMs: 50,
  memoryBytes: 8 * 1024 * 1024,
};

/** Scripts checked, by source: whether they run inline and the fields of `doc` they see (undefined: all). */
interface Verdict {
  inline: boolean;
  docFields?: string[];
}
const verdicts = new Map<string, Verdict>();
const MAX_VERDICTS = 1000;

/** SCRIPT_INLINE=0, read once (process.env is a lookup in C++ each time). */
const INLINE_OFF = process.env.SCRIPT_INLINE === '0';

/** The module, the context and the denied names, once loaded. */
let loaded: BoundedModule | undefined;
let guest: GuestContext | undefined;
let denied: ReadonlySet<string> | undefined;
let loading: Promise<void> | undefined;

/** Inline runs make no host calls: reaching one makes the run void. */
const noHost: HostBridge = () => undefined;

/** The wall-clock budget of an inline run. */
class Deadline implements Budget {
  overLimit?: 'wall';
  private readonly until = Date.now() + INLINE_LIMITS.wallMs;

  interrupted(): boolean {
    if (Date.now() > this.until) this.overLimit = 'wall';
    return this.overLimit !== undefined;
  }
}

/** Loads QuickJS on this thread (once); until it is ready, scripts go to the workers. */
function load(): void {
  if (loading) return;
  loading = Promise.resolve()
    .then(() => loadBoundedModule(INLINE_LIMITS.memoryBytes, quickjsWasm()))
    // Loading and walking the built-ins each hold the event loop for a while: not back to back.
    .then((mod) => new Promise<BoundedModule>((resolve) => setImmediate(() => resolve(mod))))
    .then(
      (mod) => {
        denied = new Set(guestNames(mod.module));
        loaded = mod;
        guest = new GuestContext(mod, INLINE_LIMITS, noHost);
      },
      (err: unknown) => {
        process.stderr.write(`inline server scripts are off: ${String(err)}\n`);
      },
    );
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

/** What a run produced: `frappe.response.message` and the globals `doc` and `conditions` (absent: none). */
export interface ScriptValues {
  message?: unknown;
  doc?: unknown;
  conditions?: unknown;
}

/** The input as the guest reads it (JSON), with only `fields` of the document when given. */
function inputJson(input: ScriptInput, fields: string[] | undefined): string {
  let doc = input.doc;
  if (doc !== undefined && fields) {
    const seen: Record<string, unknown> = {};
    for (const f of fields) if (Object.hasOwn(doc, f)) seen[f] = doc[f];
    doc = seen;
  }
  return JSON.stringify({
    form_dict: input.form_dict,
    doc,
    conditions: input.conditions ? true : undefined,
    user: input.user,
  });
}

/**
 * Runs a straight-line `source` with `input` on this thread. Undefined when the script must run in a worker: not
 * straight-line, inline off or not loaded yet, or a run that did not end well. The result is `value`; its `doc` holds
 * the fields the script sees (docMembers), as they are after it.
 */
export function runInline(source: string, filename: string, input: ScriptInput): Reported | undefined {
  if (INLINE_OFF) return undefined;
  if (!guest || !loaded || !denied) {
    load();
    return undefined;
  }
  const verdict = verdictOn(source, denied);
  if (!verdict.inline) return undefined;
  let outcome: ReturnType<GuestContext['runCompiled']> | undefined;
  try {
    outcome = guest.runCompiled(
      source,
      filename,
      inputJson(input, verdict.docFields),
      INLINE_LIMITS,
      new Deadline(),
    );
  } catch {
    outcome = undefined;
  }
  if (outcome?.ok && outcome.json !== undefined)
    return { ok: true, value: JSON.parse(outcome.json) as ScriptValues, logs: outcome.logs ?? [] };
  // Void: the script goes to the workers from now on, and the context is rebuilt (a run stopped by a limit may have
  // left it part-way through anything); after a library error or running out of memory, the whole module is.
  verdicts.set(source, { inline: false });
  try {
    guest.dispose();
  } catch {
    outcome = undefined;
  }
  if (outcome && !(outcome.ok === false && outcome.kind === 'memory'))
    guest = new GuestContext(loaded, INLINE_LIMITS, noHost);
  else {
    guest = undefined;
    loaded = undefined;
    loading = undefined;
    load();
  }
  return undefined;
}

/**
 * Starts loading the inline context, unless SCRIPT_INLINE=0 (the service calls it when it finds a Server Script: at
 * start-up and when one is saved, so that the load happens before the scripts are called rather than under them).
 */
export function preloadInline(): void {
  if (!INLINE_OFF) load();
}

/**
 * Loads the inline context unless SCRIPT_INLINE=0 and resolves once it is ready, waiting at most `maxWaitMs` (the
 * service waits for it when a Server Script is saved: the script then runs inline from its first call).
 */
export async function inlineWarm(maxWaitMs: number): Promise<void> {
  if (INLINE_OFF) return;
  load();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([loading, new Promise<void>((resolve) => (timer = setTimeout(resolve, maxWaitMs)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Loads the inline context now and resolves with the denied names when it is ready (tests). */
export async function inlineReady(): Promise<ReadonlySet<string> | undefined> {
  load();
  await loading;
  return denied;
}
