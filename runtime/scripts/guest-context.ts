// One QuickJS runtime and context with the `frappe` global, driven through quickjs-emscripten's public API only (handles,
// evalCode, callFunction, newFunction). A worker runs each job in a context of its own (built before the job, disposed
// after); the event loop's inline runner (inline-sandbox.ts) reuses one for straight-line scripts, which can reach
// nothing but `frappe`, `doc` and `conditions` (straight-line.ts), all made afresh per call.
import type {
  QuickJSContext,
  QuickJSHandle,
  QuickJSRuntime,
  VmFunctionImplementation,
} from 'quickjs-emscripten';
import { INTRINSICS } from './guest-names';
import type { HostErrorInfo, JobOutcome, ScriptLimits } from './sandbox-protocol';
import { memoryExhausted, type BoundedModule } from './quickjs-module';

/**
 * Promise jobs run after the script under the same limits, at most this many; a promise still pending is dropped.
 * QuickJS cannot free a runtime that ran a chain of 40,000 jobs or more (JS_FreeRuntime aborts on objects still listed;
 * 20,000 frees cleanly), which costs the worker its module; 10,000 keeps well under that.
 */
const MAX_JOBS = 10_000;

/** The host calls of the `frappe` global (frappe.* and frappe.db.*), each answered by the event loop. */
const HOST_CALLS = [
  'get_list',
  'get_doc',
  'new_doc',
  'get_value',
  'set_value',
  'count',
  'publish_realtime',
] as const;

/**
 * The guest half of a call, evaluated once per context with the host functions: prepare(json) makes `frappe` afresh
 * (form_dict, session.user, response) and sets the global `doc`; finish() returns frappe.response.message and the
 * globals doc and conditions as JSON text, with the JSON.stringify and global object of setup time (a script cannot
 * swap them under it); run(json, fn) does both around a compiled function, and then removes the three globals.
 * Host functions are frozen: they are the only objects a reused context hands to more than one call.
 */
const IO_SOURCE = `(function (H) {
  const G = globalThis, parse = JSON.parse, stringify = JSON.stringify, freeze = Object.freeze;
  for (const k of Object.keys(H)) freeze(H[k]);
  Math.random = H.random;
  let hasDoc = false, wantConditions = false;
  const prepare = function prepare(json) {
    const input = parse(json);
    G.frappe = {
      get_list: H.get_list, get_doc: H.get_doc, new_doc: H.new_doc, throw: H.throw, log: H.log,
      publish_realtime: H.publish_realtime,
      db: { get_value: H.get_value, set_value: H.set_value, count: H.count },
      utils: { now: H.now, today: H.today, add_days: H.add_days },
      session: { user: String(input.user || 'Guest') }, response: {}, form_dict: input.form_dict || {},
    };
    hasDoc = input.doc !== undefined;
    wantConditions = !!input.conditions;
    if (hasDoc) G.doc = input.doc;
  };
  const finish = function finish() {
    const out = {};
    const frappe = G.frappe;
    const response = frappe == null ? undefined : frappe.response;
    if (typeof response === 'object' && response !== null) out.message = response.message;
    if (hasDoc) out.doc = G.doc;
    if (wantConditions) out.conditions = G.conditions;
    return stringify(out);
  };
  const reset = function reset() { delete G.frappe; delete G.doc; delete G.conditions; };
  const run = function run(json, fn) { try { prepare(json); fn(); return finish(); } finally { reset(); } };
  return [prepare, finish, run];
})`;

/** What stops a call: checked by QuickJS's interrupt handler; `overLimit` names the limit once it is past. */
export interface Budget {
  interrupted(): boolean;
  overLimit?: 'cpu' | 'wall';
}

/**
 * Answers a host call (its name and arguments as a JSON array) with the reply as JSON text (a HostReply), or undefined
 * when no host call can be made here (inline: the run is then void).
 */
export type HostBridge = (name: string, argsJson: string, limits: ScriptLimits) => string | undefined;

/** An error thrown into the guest by the host, and what it stands for when the script does not catch it. */
interface Thrown {
  handle: QuickJSHandle;
  info: { kind: 'throw' | 'host' | 'script'; message: string; error?: HostErrorInfo };
}

/** The state of the call under way. */
interface Call {
  limits: ScriptLimits;
  budget: Budget;
  logs: string[];
  logBytes: number;
  hostCalls: number;
  /** Handles made for this call, disposed when it ends. */
  handles: QuickJSHandle[];
  thrown: Thrown[];
  imported: boolean;
  /** Inline: the script reached a host call. */
  needsWorker: boolean;
}

/** An error value as name, message and stack. */
function errorText(
  ctx: QuickJSContext,
  handle: QuickJSHandle,
): { name: string; message: string; stack: string } {
  try {
    const e = ctx.dump(handle) as unknown;
    if (e && typeof e === 'object') {
      const { name, message, stack } = e as Record<string, unknown>;
      return { name: String(name), message: String(message), stack: String(stack ?? '') };
    }
    return { name: 'Error', message: String(e), stack: '' };
  } catch {
    return { name: 'InternalError', message: 'unreadable error', stack: '' };
  }
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
const dateText = (d: Date): string =>
  `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;

/** A QuickJS runtime and context with limits and the frappe global; its host functions act for the call under way. */
export class GuestContext {
  private readonly rt: QuickJSRuntime;
  private readonly ctx: QuickJSContext;
  /** Handles that live as long as the context. */
  private readonly fixed: QuickJSHandle[] = [];
  private readonly json: QuickJSHandle;
  private readonly jsonParse: QuickJSHandle;
  private readonly jsonStringify: QuickJSHandle;
  private readonly prepareFn: QuickJSHandle;
  private readonly finishFn: QuickJSHandle;
  private readonly runFn: QuickJSHandle;
  /** Compiled straight-line scripts (inline), by source, least recently used first. */
  private readonly compiled = new Map<string, QuickJSHandle>();
  private call: Call | undefined;
  private disposed = false;

  constructor(
    private readonly loaded: BoundedModule,
    limits: Pick<ScriptLimits, 'stackBytes'>,
    private readonly host: HostBridge,
  ) {
    const rt = loaded.module.newRuntime();
    this.rt = rt;
    rt.setMaxStackSize(limits.stackBytes);
    rt.setInterruptHandler(() => this.call !== undefined && this.call.budget.interrupted());
    // There are no modules: an import() reaches this loader, which fails the call.
    rt.setModuleLoader(() => {
      if (this.call) this.call.imported = true;
      return { error: new Error('import() is not available in Server Scripts') };
    });
    const ctx = rt.newContext({ intrinsics: INTRINSICS });
    this.ctx = ctx;
    const own = (h: QuickJSHandle): QuickJSHandle => (this.fixed.push(h), h);
    this.json = own(ctx.getProp(ctx.global, 'JSON'));
    this.jsonParse = own(ctx.getProp(this.json, 'parse'));
    this.jsonStringify = own(ctx.getProp(this.json, 'stringify'));
    const hostFns = own(ctx.newObject());
    const fn = (name: string, impl: VmFunctionImplementation<QuickJSHandle>) => {
      const f = ctx.newFunction(name, impl);
      ctx.setProp(hostFns, name, f);
      f.dispose();
    };
    for (const name of HOST_CALLS) fn(name, (...args) => this.hostCall(name, args));
    fn('throw', (m) => this.raise({ kind: 'throw', message: m === undefined ? '' : this.text(m) }));
    fn('log', (...parts) => this.log(parts));
    fn('now', () => {
      const d = new Date();
      const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
      return ctx.newString(`${dateText(d)} ${time}.${pad(d.getUTCMilliseconds() * 1000, 6)}`);
    });
    fn('today', () => ctx.newString(dateText(new Date())));
    fn('add_days', (dateH, daysH) => {
      const d = new Date(`${String(dateH && ctx.dump(dateH)).slice(0, 10)}T00:00:00Z`);
      const days = Number(daysH && ctx.dump(daysH));
      if (Number.isNaN(d.getTime()) || !Number.isFinite(days) || Math.abs(days) > 1e6)
        return this.raise({
          kind: 'throw',
          message: 'add_days needs a date (YYYY-MM-DD) and a number of days',
        });
      d.setUTCDate(d.getUTCDate() + Math.trunc(days));
      return ctx.newString(dateText(d));
    });
    // Math.random is the host's: a guest's own generator is seeded alike in every fresh context.
    fn('random', () => ctx.newNumber(Math.random()));
    const factory = ctx.unwrapResult(ctx.evalCode(IO_SOURCE, 'sandbox.js'));
    const io = own(ctx.unwrapResult(ctx.callFunction(factory, ctx.undefined, hostFns)));
    factory.dispose();
    this.prepareFn = own(ctx.getProp(io, 0));
    this.finishFn = own(ctx.getProp(io, 1));
    this.runFn = own(ctx.getProp(io, 2));
  }

  /** Runs `source` as a script (global code) with `input` (JSON text); the outcome carries the result as JSON text. */
  run(source: string, filename: string, input: string, limits: ScriptLimits, budget: Budget): JobOutcome {
    const call = this.begin(limits, budget);
    const { ctx, rt } = this;
    const logs = call.logs;
    try {
      const prepared = ctx.callFunction(this.prepareFn, ctx.undefined, this.keep(ctx.newString(input)));
      if (prepared.error) return this.failed(this.keep(prepared.error));
      this.keep(prepared.value);
      const r = ctx.evalCode(source, filename);
      if (r.error) return this.failed(this.keep(r.error));
      this.keep(r.value);
      if (rt.hasPendingJob()) {
        const jobs = rt.executePendingJobs(MAX_JOBS);
        if (jobs.error) this.keep(jobs.error);
      }
      if (budget.overLimit) return { ok: false, kind: 'timeout', limit: budget.overLimit, logs };
      if (call.imported)
        return { ok: false, kind: 'script', message: 'import() is not available in Server Scripts', logs };
      if (rt.hasPendingJob())
        return { ok: false, kind: 'script', message: `more than ${MAX_JOBS} promise jobs`, logs };
      const s = ctx.callFunction(this.finishFn, ctx.undefined);
      if (s.error) return this.failed(this.keep(s.error), 'the result is not JSON: ');
      const json = this.keep(s.value);
      if (ctx.typeof(json) !== 'string')
        return { ok: false, kind: 'script', message: 'the result is not JSON', logs };
      const text = ctx.getString(json);
      if (text.length > limits.maxResultBytes) return { ok: false, kind: 'result', logs };
      return { ok: true, json: text, logs };
    } finally {
      this.end();
    }
  }

  /**
   * Runs a straight-line `source` (inline-sandbox.ts) as the body of a function compiled once per source in this
   * context, with `input`; the guest removes the globals the call set. The outcome's `json` is the result; a host call makes
   * the run void (kind `script`, `needsWorker`).
   */
  runCompiled(
    source: string,
    filename: string,
    input: string,
    limits: ScriptLimits,
    budget: Budget,
  ): JobOutcome & { needsWorker?: boolean } {
    const fn = this.compiledFunction(source, filename);
    if (!fn) return { ok: false, kind: 'script', message: 'does not compile' };
    const call = this.begin(limits, budget);
    const { ctx } = this;
    try {
      const r = ctx.callFunction(this.runFn, ctx.undefined, this.keep(ctx.newString(input)), fn);
      if (r.error) return { ...this.failed(this.keep(r.error)), needsWorker: call.needsWorker };
      const json = this.keep(r.value);
      if (budget.overLimit || this.rt.hasPendingJob() || ctx.typeof(json) !== 'string')
        return { ok: false, kind: 'script', message: 'void' };
      const text = ctx.getString(json);
      if (text.length > limits.maxResultBytes) return { ok: false, kind: 'result' };
      return { ok: true, json: text, logs: call.logs };
    } finally {
      this.end();
    }
  }

  /** Compiles `source` as a script (nothing runs); a syntax error is kind `syntax`. */
  compile(source: string, filename: string): JobOutcome {
    const r = this.ctx.evalCode(source, filename, { compileOnly: true });
    if (r.error) {
      const error = errorText(this.ctx, r.error);
      r.error.dispose();
      return { ok: false, kind: 'syntax', error };
    }
    r.value.dispose();
    return { ok: true };
  }

  /** Drops the compiled form of `source` (inline). */
  forget(source: string): void {
    this.compiled.get(source)?.dispose();
    this.compiled.delete(source);
  }

  /** Frees the context and its runtime. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const h of this.compiled.values()) h.dispose();
    this.compiled.clear();
    for (const h of this.fixed.reverse()) if (h.alive) h.dispose();
    this.ctx.dispose();
    this.rt.dispose();
  }

  /** The function `(function () { source })` in this context, compiled on first use (at most 32 kept). */
  private compiledFunction(source: string, filename: string): QuickJSHandle | undefined {
    const known = this.compiled.get(source);
    if (known) {
      this.compiled.delete(source);
      this.compiled.set(source, known);
      return known;
    }
    // A straight-line script's brackets, strings, templates and comments all close: it cannot break out of the body.
    const r = this.ctx.evalCode(`(function () {${source}\n})`, filename);
    if (r.error) {
      r.error.dispose();
      return undefined;
    }
    if (this.compiled.size >= 32) {
      const [oldest, handle] = this.compiled.entries().next().value as [string, QuickJSHandle];
      handle.dispose();
      this.compiled.delete(oldest);
    }
    this.compiled.set(source, r.value);
    return r.value;
  }

  private begin(limits: ScriptLimits, budget: Budget): Call {
    const call: Call = {
      limits,
      budget,
      logs: [],
      logBytes: 0,
      hostCalls: 0,
      handles: [],
      thrown: [],
      imported: false,
      needsWorker: false,
    };
    this.call = call;
    return call;
  }

  private end(): void {
    const call = this.call;
    this.call = undefined;
    if (!call) return;
    for (const h of call.handles) if (h.alive) h.dispose();
    for (const t of call.thrown) if (t.handle.alive) t.handle.dispose();
  }

  private current(): Call {
    if (!this.call) throw new Error('no call under way');
    return this.call;
  }

  private keep(h: QuickJSHandle): QuickJSHandle {
    this.current().handles.push(h);
    return h;
  }

  /** The outcome of a call that ended with `err` thrown: the host's own error, a limit, memory, or the script's. */
  private failed(err: QuickJSHandle, prefix = ''): Extract<JobOutcome, { ok: false }> {
    const call = this.current();
    const logs = call.logs;
    if (call.budget.overLimit) return { ok: false, kind: 'timeout', limit: call.budget.overLimit, logs };
    for (const t of call.thrown) {
      if (!this.ctx.sameValue(t.handle, err)) continue;
      const { kind, message, error } = t.info;
      if (kind === 'throw') return { ok: false, kind: 'throw', message, logs };
      if (kind === 'host' && error) return { ok: false, kind: 'host', error, logs };
      return { ok: false, kind: 'script', message, logs };
    }
    const e = errorText(this.ctx, err);
    // Out of memory, QuickJS throws an InternalError "out of memory", or, when it cannot allocate even that, null or an
    // error without name and message.
    const bare = e.message === 'null' || e.message === '' || e.message === 'undefined';
    if (e.message === 'out of memory' || (bare && memoryExhausted(this.loaded)))
      return { ok: false, kind: 'memory', logs };
    return { ok: false, kind: 'script', message: `${prefix}${e.name}: ${e.message}`, logs };
  }

  /** Throws `info` into the guest as an Error; an uncaught one is reported as itself. */
  private raise(info: Thrown['info']): { error: QuickJSHandle } {
    const call = this.current();
    const e = this.ctx.newError({ name: info.error?.excType ?? 'Error', message: info.message });
    call.thrown.push({ handle: e.dup(), info });
    if (call.thrown.length > 64) call.thrown.shift()?.handle.dispose();
    return { error: e };
  }

  private toJson(h: QuickJSHandle): string | undefined {
    const r = this.ctx.callFunction(this.jsonStringify, this.json, h);
    if (r.error) {
      const e = errorText(this.ctx, r.error);
      r.error.dispose();
      throw new Error(`${e.name}: ${e.message}`);
    }
    const out = this.ctx.typeof(r.value) === 'string' ? this.ctx.getString(r.value) : undefined;
    r.value.dispose();
    return out;
  }

  private text(h: QuickJSHandle): string {
    if (this.ctx.typeof(h) === 'string') return this.ctx.getString(h);
    try {
      return this.toJson(h) ?? String(this.ctx.dump(h));
    } catch {
      return '[unprintable]';
    }
  }

  private log(parts: QuickJSHandle[]): void {
    const call = this.current();
    const max = call.limits.maxLogBytes;
    if (call.logBytes >= max) return;
    const line = parts
      .map((p) => this.text(p))
      .join(' ')
      .slice(0, max - call.logBytes);
    call.logBytes += line.length;
    call.logs.push(line);
    if (call.logBytes >= max) call.logs.push('[log truncated]');
  }

  private hostCall(name: string, argHandles: QuickJSHandle[]): QuickJSHandle | { error: QuickJSHandle } {
    const call = this.current();
    const { ctx } = this;
    const limits = call.limits;
    if (++call.hostCalls > limits.maxHostCalls)
      return this.raise({ kind: 'script', message: 'Server script made too many calls' });
    const args = argHandles.map((h) => (ctx.typeof(h) === 'undefined' ? 'null' : (this.toJson(h) ?? 'null')));
    const argsJson = `[${args.join(',')}]`;
    if (argsJson.length > limits.maxResultBytes)
      return this.raise({ kind: 'script', message: 'Server script call arguments are too large' });
    const reply = this.host(name, argsJson, limits);
    if (reply === undefined) {
      call.needsWorker = true;
      return this.raise({ kind: 'script', message: 'host calls run in the worker' });
    }
    const out = JSON.parse(reply) as { ok?: unknown; err?: HostErrorInfo; timeout?: true };
    if (out.timeout) return this.raise({ kind: 'script', message: 'Server script call timed out' });
    if (out.err) return this.raise({ kind: 'host', message: out.err.message, error: out.err });
    const r = ctx.callFunction(
      this.jsonParse,
      this.json,
      this.keep(ctx.newString(JSON.stringify(out.ok === undefined ? null : out.ok))),
    );
    if (r.error) return r;
    return r.value;
  }
}
