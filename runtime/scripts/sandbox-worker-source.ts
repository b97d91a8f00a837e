// The JavaScript a sandbox worker thread runs (eval, so it needs neither tsx nor the runtime bundle): it loads QuickJS
// (WebAssembly) once and runs each job in a fresh QuickJS runtime and context with hard limits. Host calls block the
// worker (Atomics.wait) until the main thread answers, so the guest sees them as plain synchronous functions. The CPU
// budget is read from this thread's own CPU clock (Linux: /proc/thread-self/schedstat), so waiting for host calls or
// being descheduled on a busy machine is not charged; the wall clock outside host calls is only the backstop.
//
// Fresh without paying for it: building a QuickJS runtime and context with the frappe global costs about 300 us of CPU
// (context creation, its disposal, the wrappers' garbage), more than a trivial script and the request around it. So the
// worker builds one, once, and copies the WebAssembly memory that holds it (the static data and the heap in use; not
// the C stack, which holds nothing between calls). Before every job it copies that image back over the memory: the
// runtime, context, globals, heap and allocator are then byte for byte what they were before any script ran, so
// nothing of an earlier call (globals, prototypes, pending promises, atoms, garbage) survives into the next. The JS
// side of quickjs-emscripten holds only pointers into that image, which stay valid; handles made during a job are
// never freed, the copy discards them. Math.random is a host function (a restored context would repeat its seed). If
// the memory layout is not the one expected (see layoutOf), each job builds and disposes its own runtime instead.
//
// The same program also runs on the event loop thread (inline-sandbox.ts, workerData.inline): there it takes no
// messages, makes no host calls (a host call ends the run as "needs the worker") and exports runInline and guestNames.

/** The worker thread's program (plain CommonJS JavaScript). */
export const WORKER_SOURCE = `
const { parentPort, workerData, receiveMessageOnPort } = require('node:worker_threads');
const { newQuickJSWASMModule, RELEASE_SYNC } = require(workerData.quickjs);
// The release build, its Emscripten module loaded with require (the variant's own loader uses import(), which a host
// running this program through a CommonJS loader, such as jest's, may not offer).
const SYNC_VARIANT = Object.assign({}, RELEASE_SYNC, {
  importModuleLoader: () => {
    const path = require('node:path');
    const mod = require(require.resolve('@jitl/quickjs-wasmfile-release-sync/emscripten-module', { paths: [path.dirname(workerData.quickjs)] }));
    return Promise.resolve(mod.default || mod);
  },
});
const fs = require('node:fs');
const signal = new Int32Array(workerData.signal, 0, 2);
const cpuStart = new Float64Array(workerData.signal, 8, 1);
const replyPort = workerData.replyPort;
const INLINE = workerData.inline === true;
// Inline: set when the script reached a host call (the run is then void, the caller runs it in a worker).
let needsWorker = false;
// Outcomes go out on their own port, so that the main thread can take one synchronously (receiveMessageOnPort). The
// event cell tells a main thread waiting for a job what happened: the job's tag when its outcome is posted, minus the
// tag when it made a host call (which the main thread answers on its event loop).
const resultPort = workerData.resultPort;
const events = new Int32Array(workerData.signal, 16, 1);
const tagOf = (id) => (id % 1073741823) + 1;
function tell(value) {
  Atomics.store(events, 0, value);
  Atomics.notify(events, 0);
}
function post(msg) {
  resultPort.postMessage(msg);
  tell(tagOf(msg.id));
}

// This thread's CPU clock in ms (NaN when there is none): schedstat's first field is the nanoseconds spent on a CPU.
let cpuFd;
const cpuBuf = Buffer.alloc(64);
try {
  cpuFd = fs.openSync('/proc/thread-self/schedstat', 'r');
  const tid = Number(String(fs.readlinkSync('/proc/thread-self')).split('/').pop());
  if (tid > 0) Atomics.store(signal, 1, tid);
} catch (e) {
  cpuFd = undefined;
}
function threadCpuMs() {
  if (cpuFd === undefined) return NaN;
  try {
    const n = fs.readSync(cpuFd, cpuBuf, 0, 64, 0);
    let ns = 0;
    for (let i = 0; i < n; i++) {
      const c = cpuBuf[i];
      if (c < 48 || c > 57) break;
      ns = ns * 10 + (c - 48);
    }
    return ns / 1e6;
  } catch (e) {
    return NaN;
  }
}
let seq = 0;

function errorText(ctx, handle) {
  try {
    const e = ctx.dump(handle);
    if (e && typeof e === 'object') return { name: String(e.name), message: String(e.message), stack: String(e.stack || '') };
    return { name: 'Error', message: String(e), stack: '' };
  } catch (x) {
    return { name: 'InternalError', message: 'unreadable error', stack: '' };
  }
}

/**
 * The interrupt check of a job: true once its thread CPU time passes limits.cpuMs, or its wall time outside host calls
 * passes limits.wallMs (then call.overLimit names which). The CPU clock is read only once the job has run cpuMs of wall
 * time (it cannot have used more CPU than that), and then at most every 5 ms.
 */
function budget(call) {
  const limits = call.limits;
  let nextRead = call.started + limits.cpuMs;
  return () => {
    if (call.overLimit) return true;
    const now = Date.now();
    if (now - call.started - call.hostMs > limits.wallMs) call.overLimit = 'wall';
    else if (now >= nextRead) {
      nextRead = now + 5;
      const used = threadCpuMs() - call.cpu0;
      // Without a CPU clock, the wall time outside host calls stands in for it.
      if (Number.isNaN(used) ? now - call.started - call.hostMs > limits.cpuMs : used > limits.cpuMs) call.overLimit = 'cpu';
    }
    return call.overLimit !== undefined;
  };
}

// Only these language features exist in a guest: no typed arrays (no SharedArrayBuffer or Atomics), no Proxy. Promise
// jobs run after the script, under the same limits (at most MAX_JOBS of them); a promise still pending then is dropped
// with the context. There are no modules: an import() reaches the loader below, which fails the call.
const INTRINSICS = { BaseObjects: true, Date: true, Eval: true, StringNormalize: true, RegExp: true, JSON: true, MapSet: true, Promise: true };

const MAX_JOBS = 100000;

const pad = (n, w) => String(n).padStart(w || 2, '0');
const dateText = (d) => d.getUTCFullYear() + '-' + pad(d.getUTCMonth() + 1) + '-' + pad(d.getUTCDate());

// The job running now: the sandbox's host functions, interrupt handler and module loader read it.
let call;

/** A QuickJS runtime and context with limits and the frappe global; its host functions act for the current call. */
function buildSandbox(mod, limits) {
  const rt = mod.newRuntime();
  rt.setMemoryLimit(limits.memoryBytes);
  rt.setMaxStackSize(limits.stackBytes);
  rt.setInterruptHandler(() => call !== undefined && call.interrupt());
  rt.setModuleLoader(() => {
    if (call) call.imported = true;
    return { error: new Error('import() is not available in Server Scripts') };
  });
  const ctx = rt.newContext({ intrinsics: INTRINSICS });
  // The handles quickjs-emscripten caches on first use are made now, so that they live in the memory image.
  void ctx.undefined, ctx.null, ctx.true, ctx.false;
  const global = ctx.global;
  const sb = { mod, rt, ctx, global, memoryBytes: limits.memoryBytes, stackBytes: limits.stackBytes, fixed: [] };
  const own = (h) => { sb.fixed.push(h); return h; };
  sb.json = own(ctx.getProp(global, 'JSON'));
  sb.jsonParse = own(ctx.getProp(sb.json, 'parse'));
  sb.jsonStringify = own(ctx.getProp(sb.json, 'stringify'));
  const fn = (target, name, impl) => {
    const f = own(ctx.newFunction(name, impl));
    ctx.setProp(target, name, f);
  };
  const api = (target, name, hostName) => fn(target, name, (...a) => hostCall(sb, hostName, a));
  const frappe = own(ctx.newObject());
  sb.frappe = frappe;
  sb.session = own(ctx.newObject());
  ctx.setProp(frappe, 'session', sb.session);
  ctx.setProp(frappe, 'response', own(ctx.newObject()));
  api(frappe, 'get_list', 'get_list');
  api(frappe, 'get_doc', 'get_doc');
  api(frappe, 'new_doc', 'new_doc');
  const db = own(ctx.newObject());
  api(db, 'get_value', 'get_value');
  api(db, 'set_value', 'set_value');
  api(db, 'count', 'count');
  ctx.setProp(frappe, 'db', db);
  fn(frappe, 'throw', (m) => raise(sb, { kind: 'throw', message: m === undefined ? '' : text(sb, m) }));
  fn(frappe, 'log', (...parts) => {
    const limits = call.limits;
    if (call.logBytes >= limits.maxLogBytes) return;
    const line = parts.map((p) => text(sb, p)).join(' ').slice(0, limits.maxLogBytes - call.logBytes);
    call.logBytes += line.length;
    call.logs.push(line);
    if (call.logBytes >= limits.maxLogBytes) call.logs.push('[log truncated]');
  });
  const utils = own(ctx.newObject());
  fn(utils, 'now', () => {
    const d = new Date();
    return ctx.newString(dateText(d) + ' ' + pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes()) + ':' + pad(d.getUTCSeconds()) + '.' + pad(d.getUTCMilliseconds() * 1000, 6));
  });
  fn(utils, 'today', () => ctx.newString(dateText(new Date())));
  fn(utils, 'add_days', (dateH, daysH) => {
    const d = new Date(String(ctx.dump(dateH)).slice(0, 10) + 'T00:00:00Z');
    const days = Number(ctx.dump(daysH));
    if (isNaN(d.getTime()) || !Number.isFinite(days) || Math.abs(days) > 1e6)
      return raise(sb, { kind: 'throw', message: 'add_days needs a date (YYYY-MM-DD) and a number of days' });
    d.setUTCDate(d.getUTCDate() + Math.trunc(days));
    return ctx.newString(dateText(d));
  });
  ctx.setProp(frappe, 'utils', utils);
  ctx.setProp(global, 'frappe', frappe);
  fn(own(ctx.getProp(global, 'Math')), 'random', () => ctx.newNumber(Math.random()));
  // The input and the result cross in one call each: guest functions made now, reachable from no global, sharing what
  // the input asked for. prepare(json) sets frappe.form_dict, frappe.session.user and the global doc; finish() returns
  // frappe.response.message and the globals doc and conditions as JSON text, with the JSON.stringify and global object
  // of this moment (a script cannot swap them under it); runCompiled(json, script) does both around a compiled script.
  const io = ctx.evalCode(
    '(() => { const G = globalThis, F = G.frappe, S = F.session, parse = JSON.parse, stringify = JSON.stringify; ' +
    'let hasDoc = false, wantConditions = false; ' +
    'const prepare = function prepare(json) { const input = parse(json); F.form_dict = input.form_dict || {}; ' +
    'S.user = String(input.user || "Guest"); hasDoc = input.doc !== undefined; wantConditions = !!input.conditions; ' +
    'if (hasDoc) G.doc = input.doc; }; ' +
    'const finish = function finish() { const out = {}; const frappe = G.frappe; ' +
    'const response = frappe == null ? undefined : frappe.response; ' +
    'if (typeof response === "object" && response !== null) out.message = response.message; ' +
    'if (hasDoc) out.doc = G.doc; if (wantConditions) out.conditions = G.conditions; return stringify(out); }; ' +
    // encode(): what finish() gives, without JSON.stringify over the whole result (which costs QuickJS more than a
    // short script): each value as a kind letter and, for strings, its length (decodeResult in inline-sandbox.ts reads
    // it). A primitive as itself (JSON's null for a number that is not finite; u for what JSON leaves out), any other
    // value as its JSON.stringify text, and the global doc, when it is a plain object, key by key in its own order.
    // A string holding NUL goes as JSON: the result crosses as a C string.
    'const keys = Object.keys, isArray = Array.isArray, finite = Number.isFinite, NUL = String.fromCharCode(0); ' +
    'const enc = function enc(v) { const t = typeof v; ' +
    'if (t === "string" && v.indexOf(NUL) === -1) return "s" + v.length + ":" + v; ' +
    'if (t === "number") return finite(v) ? "n" + v + ";" : "z"; ' +
    'if (t === "boolean") return v ? "t" : "f"; ' +
    'if (v === null) return "z"; ' +
    'if (t === "undefined" || t === "function" || t === "symbol") return "u"; ' +
    'const j = stringify(v); return j === undefined ? "u" : "j" + j.length + ":" + j; }; ' +
    'const encode = function encode() { const frappe = G.frappe; ' +
    'const response = frappe == null ? undefined : frappe.response; ' +
    'let s = typeof response === "object" && response !== null ? enc(response.message) : "u"; ' +
    'if (!hasDoc) s += "-"; else { const d = G.doc; ' +
    'if (typeof d === "object" && d !== null && !isArray(d) && d.toJSON === undefined) { const ks = keys(d); ' +
    's += "o" + ks.length + ";"; for (let i = 0; i < ks.length; i++) { const k = ks[i]; s += k.length + ":" + k + enc(d[k]); } } ' +
    'else s += enc(d); } ' +
    'return wantConditions ? s + enc(G.conditions) : s + "-"; }; ' +
    'return [prepare, finish, function runCompiled(json, script) { prepare(json); script(); const out = encode(); ' +
    'if (typeof out !== "string") throw new TypeError("the result is not JSON"); return out; }, ' +
    // Inline, the host reads the result itself (hostEncode) after runScript: which of doc and conditions to read is
    // runScript's answer (1: doc, 2: conditions); encode is called only when the host cannot read it for sure.
    'function runScript(json, script) { prepare(json); script(); return (hasDoc ? 1 : 0) | (wantConditions ? 2 : 0); }, ' +
    'encode, function encodeAs(flags) { hasDoc = (flags & 1) !== 0; wantConditions = (flags & 2) !== 0; return encode(); }]; })()',
    'sandbox.js',
  );
  if (io.error) throw new Error('the sandbox io functions did not compile');
  own(io.value);
  sb.prepare = own(ctx.getProp(io.value, 0));
  sb.finish = own(ctx.getProp(io.value, 1));
  // Inline: prepare, the compiled script and encode in one call (a straight-line script makes no promise jobs); it
  // returns a string or throws.
  sb.runCompiled = own(ctx.getProp(io.value, 2));
  // The C pointers the inline call passes to the module's exports itself (see runCompiled below), and for hostEncode
  // the global object, the built-ins encode uses and the property names it reads, made now so that they are in the image.
  const name = (n) => own(ctx.newString(n)).value;
  const builtIn = (g, n) => { const o = own(ctx.getProp(global, g)); return own(ctx.getProp(o, n)).value; };
  sb.ptr = {
    ctx: ctx.ctx.value,
    rt: rt.rt.value,
    undefined: ctx.undefined.value,
    runCompiled: sb.runCompiled.value,
    runScript: own(ctx.getProp(io.value, 3)).value,
    encode: own(ctx.getProp(io.value, 4)).value,
    global: global.value,
    json: sb.json.value,
    stringify: sb.jsonStringify.value,
    keys: builtIn('Object', 'keys'),
    isArray: builtIn('Array', 'isArray'),
    parse: sb.jsonParse.value,
    frappe: frappe.value,
    session: sb.session.value,
    encodeAs: own(ctx.getProp(io.value, 5)).value,
    name: { doc: name('doc'), frappe: name('frappe'), response: name('response'), message: name('message'),
      conditions: name('conditions'), toJSON: name('toJSON'), length: name('length'), form_dict: name('form_dict'),
      user: name('user') },
  };
  return sb;
}

/** Frees a sandbox built for one job (not the one kept as a memory image). */
function disposeSandbox(sb) {
  for (const h of sb.fixed.reverse()) { try { if (h.alive) h.dispose(); } catch (x) {} }
  sb.ctx.dispose();
  sb.rt.dispose();
}

// The memory layout the image relies on, read from the WebAssembly file: Emscripten places the static data (from 1024),
// then the C stack (STACK_SIZE bytes, growing down from the initial stack pointer), then the heap. The build in use has
// a 5 MB stack; the layout is accepted only when the initial stack pointer less 5 MB falls just past the last data
// segment (where the zero-initialised statics end). Undefined when it does not hold: then no image is used.
const STACK_SIZE = 5 * 1024 * 1024;
function layoutOf() {
  try {
    const path = require('node:path');
    const dir = path.dirname(require.resolve('@jitl/quickjs-wasmfile-release-sync', { paths: [path.dirname(workerData.quickjs)] }));
    const b = fs.readFileSync(path.join(dir, 'emscripten-module.wasm'));
    let i = 8;
    let sp;
    let dataEnd = 0;
    const leb = () => { let r = 0, m = 1, x; do { x = b[i++]; r += (x & 0x7f) * m; m *= 128; } while (x & 0x80); return r; };
    while (i < b.length) {
      const id = b[i++];
      const size = leb();
      const end = i + size;
      if (id === 6) {
        leb();
        // The first global: the mutable i32 stack pointer, initialised by an i32.const.
        if (b[i] !== 0x7f || b[i + 1] !== 1 || b[i + 2] !== 0x41) return undefined;
        i += 3;
        sp = leb();
      } else if (id === 11) {
        const n = leb();
        for (let k = 0; k < n; k++) {
          if (leb() !== 0 || b[i++] !== 0x41) return undefined;
          const offset = leb();
          if (b[i++] !== 0x0b) return undefined;
          const length = leb();
          dataEnd = Math.max(dataEnd, offset + length);
          i += length;
        }
      }
      i = end;
    }
    const staticEnd = sp - STACK_SIZE;
    if (!sp || staticEnd < dataEnd || staticEnd > dataEnd + 65536) return undefined;
    // A margin past the statics (still the far end of the stack, which no call reaches).
    return { staticEnd: staticEnd + 16384, heapBase: sp };
  } catch (e) {
    return undefined;
  }
}
const LAYOUT = layoutOf();

/**
 * Copies the memory holding a freshly built sandbox: [0, staticEnd) and [heapBase, top of the heap in use). The top is
 * where an allocation larger than any free block lands (the allocator's free space above everything in use).
 */
function imageOf(sb) {
  const em = sb.mod.module;
  if (!LAYOUT || !em || !(em.HEAPU8 instanceof Uint8Array) || typeof em._malloc !== 'function') return undefined;
  const probe = em._malloc(8 * 1024 * 1024);
  if (!probe) return undefined;
  em._free(probe);
  if (probe <= LAYOUT.heapBase) return undefined;
  const heap = em.HEAPU8;
  return { em, low: heap.slice(0, LAYOUT.staticEnd), high: heap.slice(LAYOUT.heapBase, probe) };
}

/** The module, and the sandbox kept with its memory image (image undefined: a sandbox per job). */
let kept;
function load() {
  // A macrotask between loading the module and building the sandbox: on the event loop thread (inline) each holds the
  // loop for a while, so they are not run back to back.
  return newQuickJSWASMModule(SYNC_VARIANT).then((mod) => new Promise((resolve) => setImmediate(() => resolve(mod)))).then((mod) => {
    const sb = buildSandbox(mod, { memoryBytes: workerData.memoryBytes, stackBytes: workerData.stackBytes });
    const image = imageOf(sb);
    if (!image) disposeSandbox(sb);
    else if (INLINE) sb.hostReads = sb.layoutChecked = probeLayout(sb);
    return { mod, sb: image ? sb : undefined, image };
  });
}
let ready = load();

/**
 * A sandbox for a job with these limits: the kept one with its memory copied back (from image, the kept image unless
 * the job brings the image of its compiled script), or a new one.
 */
function acquire(limits, image) {
  if (!kept.image) return buildSandbox(kept.mod, limits);
  const { em, low, high } = image || kept.image;
  const heap = em.HEAPU8;
  heap.set(low, 0);
  heap.set(high, LAYOUT.heapBase);
  const sb = kept.sb;
  if (limits.memoryBytes !== sb.memoryBytes) sb.rt.setMemoryLimit(limits.memoryBytes);
  if (limits.stackBytes !== sb.stackBytes) sb.rt.setMaxStackSize(limits.stackBytes);
  return sb;
}

/** After a job: a sandbox of its own is freed; the kept one is left as it is (the next job copies the image back). */
function release(sb, handles) {
  if (kept.image && sb === kept.sb) return;
  for (const h of handles.reverse()) { try { if (h.alive) h.dispose(); } catch (x) {} }
  disposeSandbox(sb);
}

/** Throws info into the guest as an Error; an uncaught one is reported as itself. */
function raise(sb, info) {
  const e = sb.ctx.newError({ name: info.excType || 'Error', message: String(info.message) });
  call.handles.push(e);
  call.thrown.push({ handle: e.dup(), info });
  if (call.thrown.length > 64) call.handles.push(call.thrown.shift().handle);
  return { error: e };
}

function fromJson(sb, textValue) {
  const r = sb.ctx.callFunction(sb.jsonParse, sb.json, keep(sb.ctx.newString(textValue)));
  if (r.error) throw r.error;
  return keep(r.value);
}

function toJson(sb, h) {
  const ctx = sb.ctx;
  const r = ctx.callFunction(sb.jsonStringify, sb.json, h);
  if (r.error) { const e = errorText(ctx, r.error); r.error.dispose(); throw new Error(e.name + ': ' + e.message); }
  const out = ctx.typeof(r.value) === 'string' ? ctx.getString(r.value) : undefined;
  r.value.dispose();
  return out;
}

function text(sb, h) {
  const ctx = sb.ctx;
  if (ctx.typeof(h) === 'string') return ctx.getString(h);
  try { const t = toJson(sb, h); return t === undefined ? String(ctx.dump(h)) : t; } catch (x) { return '[unprintable]'; }
}

function keep(h) {
  call.handles.push(h);
  return h;
}

function hostCall(sb, name, argHandles) {
  const ctx = sb.ctx;
  const limits = call.limits;
  if (INLINE) {
    needsWorker = true;
    return raise(sb, { kind: 'script', message: 'host calls run in the worker' });
  }
  if (++call.hostCalls > limits.maxHostCalls) return raise(sb, { kind: 'script', message: 'Server script made too many calls' });
  const args = [];
  for (const h of argHandles) {
    const t = ctx.typeof(h) === 'undefined' ? 'null' : toJson(sb, h);
    args.push(t === undefined ? 'null' : t);
  }
  const argsJson = '[' + args.join(',') + ']';
  if (argsJson.length > limits.maxResultBytes) return raise(sb, { kind: 'script', message: 'Server script call arguments are too large' });
  const mine = ++seq;
  const t0 = Date.now();
  Atomics.store(signal, 0, 0);
  parentPort.postMessage({ t: 'host', id: call.job.id, seq: mine, name, args: argsJson });
  tell(-tagOf(call.job.id));
  let reply;
  for (;;) {
    const left = limits.hostWaitMs - (Date.now() - t0);
    if (left <= 0) break;
    Atomics.wait(signal, 0, 0, left);
    Atomics.store(signal, 0, 0);
    let msg;
    while ((msg = receiveMessageOnPort(replyPort))) if (msg.message.seq === mine) reply = msg.message;
    if (reply) break;
  }
  call.hostMs += Date.now() - t0;
  if (!reply) return raise(sb, { kind: 'script', message: 'Server script call timed out' });
  const out = JSON.parse(reply.json);
  if (out.err) return raise(sb, Object.assign({ kind: 'host' }, out.err));
  return fromJson(sb, JSON.stringify(out.ok === undefined ? null : out.ok));
}

function compile(job) {
  const sb = acquire(job.limits);
  call = newCall(job);
  try {
    const r = sb.ctx.evalCode(job.source, job.filename, { compileOnly: true });
    if (r.error) return { ok: false, kind: 'syntax', error: errorText(sb.ctx, keep(r.error)) };
    keep(r.value);
    return { ok: true };
  } finally {
    const handles = call.handles;
    call = undefined;
    release(sb, handles);
  }
}

function newCall(job) {
  const c = {
    job,
    limits: job.limits,
    started: Date.now(),
    cpu0: cpuStart[0],
    hostMs: 0,
    hostCalls: 0,
    logBytes: 0,
    logs: [],
    handles: [],
    // Errors this worker threw into the guest (frappe.throw, failed host calls): an uncaught one is reported as itself.
    thrown: [],
    overLimit: undefined,
    imported: false,
  };
  c.interrupt = budget(c);
  return c;
}

function run(job) {
  const sb = acquire(job.limits);
  const ctx = sb.ctx;
  call = newCall(job);
  const limits = job.limits;
  const logs = call.logs;
  const timeout = () => ({ ok: false, kind: 'timeout', limit: call.overLimit, logs });
  try {
    const prepared = ctx.callFunction(sb.prepare, ctx.undefined, keep(ctx.newString(job.input)));
    if (prepared.error) throw prepared.error;
    keep(prepared.value);
    const r = ctx.evalCode(job.source, job.filename);
    if (r.error) {
      const err = keep(r.error);
      if (call.overLimit) return timeout();
      for (const t of call.thrown) {
        if (ctx.sameValue(t.handle, err)) {
          if (t.info.kind === 'throw') return { ok: false, kind: 'throw', message: t.info.message, logs };
          if (t.info.kind === 'host') return { ok: false, kind: 'host', error: { excType: t.info.excType, status: t.info.status, message: t.info.message }, logs };
          return { ok: false, kind: 'script', message: t.info.message, logs };
        }
      }
      const e = errorText(ctx, err);
      if (call.overLimit) return timeout();
      return { ok: false, kind: 'script', message: e.name + ': ' + e.message, logs };
    }
    keep(r.value);
    if (sb.rt.hasPendingJob()) {
      const jobs = sb.rt.executePendingJobs(MAX_JOBS);
      if (jobs.error) keep(jobs.error);
    }
    if (call.overLimit) return timeout();
    if (call.imported) return { ok: false, kind: 'script', message: 'import() is not available in Server Scripts', logs };
    if (sb.rt.hasPendingJob()) return { ok: false, kind: 'script', message: 'more than ' + MAX_JOBS + ' promise jobs', logs };
    // The result: frappe.response.message, and the globals doc and conditions, read as JSON (capped).
    const s = ctx.callFunction(sb.finish, ctx.undefined);
    if (s.error) {
      const e = errorText(ctx, keep(s.error));
      if (call.overLimit) return timeout();
      return { ok: false, kind: 'script', message: 'the result is not JSON: ' + e.name + ': ' + e.message, logs };
    }
    keep(s.value);
    if (ctx.typeof(s.value) !== 'string') return { ok: false, kind: 'script', message: 'the result is not JSON', logs };
    const json = ctx.getString(s.value);
    if (json.length > limits.maxResultBytes) return { ok: false, kind: 'result', logs };
    return { ok: true, json, logs };
  } catch (e) {
    if (call.overLimit) return timeout();
    if (e && typeof e === 'object' && 'alive' in e) { const x = errorText(ctx, e); return { ok: false, kind: 'script', message: x.name + ': ' + x.message, logs }; }
    // Not a guest exception (a trap in the WebAssembly, a library error): the next job starts on a fresh module.
    ready = load();
    return { ok: false, kind: 'script', message: String(e && e.message), logs };
  } finally {
    const handles = call.handles.concat(call.thrown.map((t) => t.handle));
    call = undefined;
    release(sb, handles);
  }
}

/**
 * The names a straight-line script may not use as a member or key: every own property of the guest's built-ins (walked
 * from a bare context's global object) whose value is an object or function, and every accessor but those listed.
 */
function guestNames(mod) {
  const rt = mod.newRuntime();
  const ctx = rt.newContext({ intrinsics: INTRINSICS });
  try {
    const r = ctx.evalCode(
      '(() => { const allow = new Set(' + JSON.stringify(ACCESSORS_ALLOWED) + '); const deny = new Set(); ' +
      'const seen = new Set([globalThis]); const queue = [globalThis]; ' +
      'while (queue.length) { const o = queue.pop(); ' +
      'for (const k of Object.getOwnPropertyNames(o)) { const d = Object.getOwnPropertyDescriptor(o, k); ' +
      'if (!("value" in d)) { if (!allow.has(k)) deny.add(k); continue; } ' +
      'const v = d.value; if ((typeof v === "object" && v !== null) || typeof v === "function") { deny.add(k); ' +
      'if (!seen.has(v)) { seen.add(v); queue.push(v); } } } ' +
      'const p = Object.getPrototypeOf(o); if (p && !seen.has(p)) { seen.add(p); queue.push(p); } } ' +
      'return JSON.stringify([...deny]); })()',
      'names.js',
    );
    if (r.error) { r.error.dispose(); throw new Error('guestNames failed'); }
    const names = JSON.parse(ctx.getString(r.value));
    r.value.dispose();
    return names;
  } finally {
    ctx.dispose();
    rt.dispose();
  }
}
// Accessors whose value is a primitive and whose names scripts use for their own data.
const ACCESSORS_ALLOWED = ['description', 'size', 'source', 'flags', 'global', 'byteLength'];

/**
 * Inline, a compiled straight-line script: the host sets the input (what prepare() does), calls the compiled script and
 * reads the result as encode() would give it (hostEncode), all through the module's exports; the guest's interpreter
 * runs the script alone. Without the layout hostEncode needs (or in tests, hostReads(false)), one guest call does
 * prepare, the script and encode. Only a good outcome is used (anything else sends the call to a worker), so failures
 * are not told apart here.
 */
//
// The calls go to the module's exports directly, not through quickjs-emscripten's handles: nothing made here is freed
// (the next call copies the image back over it, as it does the handles of any job), and the wrappers' bookkeeping (a
// lifetime object per value, a scope, the pointer array) cost more than the script. The input's texts are written into
// memory from malloc, NUL-terminated (JSON text holds no raw NUL). In the run loop (docs/performance.md), the
// host's prepare and encode made a run 20-25% cheaper than the guest's (12 against 15.6 us; 15.4 against 20.1 with 4 MB
// of memory touched between runs).
/** A Buffer over the module's memory: texts are written through it (no view per text); renewed when the memory grows. */
let heapBuffer;
function bufferOf(heap) {
  if (heapBuffer === undefined || heapBuffer.buffer !== heap.buffer) heapBuffer = Buffer.from(heap.buffer, heap.byteOffset, heap.byteLength);
  return heapBuffer;
}
/** Bytes for text as UTF-8 with its NUL: a bound (3 per UTF-16 unit) for a short text, else counted. */
function bytesFor(text) {
  if (text === undefined) return 0;
  return text.length <= 4096 ? 3 * text.length + 1 : Buffer.byteLength(text, 'utf8') + 1;
}
/**
 * Writes text as UTF-8 and a NUL at addr; the address past it. A short ASCII text (the usual input JSON) is written
 * character by character: Buffer#write's call into C++ cost more than the loop for 60 characters.
 */
function writeText(buf, text, addr) {
  const n = text.length;
  if (n <= 256) {
    let i = 0;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 128) break;
      buf[addr + i] = c;
    }
    if (i === n) {
      buf[addr + n] = 0;
      return addr + n + 1;
    }
  }
  const end = addr + buf.write(text, addr, 'utf8');
  buf[end] = 0;
  return end + 1;
}
/** What runCompiled returns for any run not used (the caller tells no failure apart: the run goes to a worker). */
const FAILED = Object.freeze({ ok: false });
/** Writes a 32-bit value at addr, little-endian (the module exports no 32-bit view of its memory). */
function put32(heap, addr, value) {
  heap[addr] = value & 255;
  heap[addr + 1] = (value >>> 8) & 255;
  heap[addr + 2] = (value >>> 16) & 255;
  heap[addr + 3] = value >>> 24;
}
function runCompiled(job, compiled) {
  const sb = acquire(job.limits, compiled.image);
  const em = sb.mod.module;
  const p = sb.ptr;
  call = newCall(job);
  const fail = FAILED;
  try {
    const hostReads = sb.hostReads === true;
    const parts = job.parts;
    // The host sets the globals itself when every text crosses exactly (JSON text is well formed and holds no NUL).
    const hostSets = hostReads && parts !== undefined && parts.user.indexOf('\\u0000') === -1 && parts.user.isWellFormed();
    // The texts: the doc's, form_dict's and the user's when the host sets them, else the input JSON alone.
    const docText = hostSets ? parts.doc : job.input;
    const formText = hostSets ? parts.formDict : undefined;
    const userText = hostSets ? parts.user : undefined;
    // The arguments' pointers (two; hostEncode reuses the 8 bytes), then the texts, NUL-terminated (one allocation).
    const argv = em._malloc(8 + bytesFor(docText) + bytesFor(formText) + bytesFor(userText));
    if (!argv) return fail;
    const buf = bufferOf(em.HEAPU8);
    let end = argv + 8;
    const at0 = docText === undefined ? 0 : end;
    if (docText !== undefined) end = writeText(buf, docText, end);
    const at1 = formText === undefined ? 0 : end;
    if (formText !== undefined) end = writeText(buf, formText, end);
    const at2 = userText === undefined ? 0 : end;
    if (userText !== undefined) end = writeText(buf, userText, end);
    let result;
    let flags;
    if (hostSets) {
      // prepare(json) of the guest: frappe.form_dict = form_dict || {}, frappe.session.user = user, and the global doc
      // when there is one (JSON.parse of its text), in its order; then the script, called as runCompiled calls it.
      const c = p.ctx;
      let doc = 0;
      if (at0) {
        doc = callOne(em, p, p.parse, p.json, em._QTS_NewString(c, at0), argv);
        if (em._QTS_ResolveException(c, doc)) return fail;
      }
      let formDict;
      if (at1) {
        formDict = callOne(em, p, p.parse, p.json, em._QTS_NewString(c, at1), argv);
        if (em._QTS_ResolveException(c, formDict)) return fail;
      } else formDict = em._QTS_NewObject(c);
      em._QTS_SetProp(c, p.frappe, p.name.form_dict, formDict);
      em._QTS_SetProp(c, p.session, p.name.user, em._QTS_NewString(c, at2));
      if (doc) em._QTS_SetProp(c, p.global, p.name.doc, doc);
      flags = (doc ? 1 : 0) | (parts.conditions ? 2 : 0);
      result = em._QTS_Call(c, compiled.fn.value, p.undefined, 0, argv);
    } else {
      const input = em._QTS_NewString(p.ctx, at0);
      put32(em.HEAPU8, argv, input);
      put32(em.HEAPU8, argv + 4, compiled.fn.value);
      result = em._QTS_Call(p.ctx, hostReads ? p.runScript : p.runCompiled, p.undefined, 2, argv);
    }
    if (em._QTS_ResolveException(p.ctx, result)) return fail;
    if (call.overLimit || em._QTS_IsJobPending(p.rt)) return fail;
    let out = result;
    if (hostReads) {
      if (!hostSets) {
        if (tagAt(em, result) !== TAG_INT) return fail;
        flags = valueAt(em, result);
      }
      const encoded = hostEncode(em, p, flags, argv);
      if (encoded !== undefined) return { ok: true, encoded, logs: call.logs };
      // What the host cannot read for sure (a string holding NUL or a lone surrogate, a NaN, an exception): the guest's
      // own encode, on the same state.
      out = callOne(em, p, p.encodeAs, p.undefined, em._QTS_NewFloat64(p.ctx, flags), argv);
      if (em._QTS_ResolveException(p.ctx, out)) return fail;
      if (tagAt(em, out) !== TAG_STRING) return fail;
    }
    const chars = em._QTS_GetString(p.ctx, out);
    if (!chars) return fail;
    // The encoded result (see encode in buildSandbox), not JSON: inline-sandbox.ts decodes it and applies the limit.
    return { ok: true, encoded: em.UTF8ToString(chars), logs: call.logs };
  } catch (e) {
    ready = load();
    return fail;
  } finally {
    call = undefined;
  }
}

// hostEncode: the text the guest's encode() would return, read by the host through the module's exports (no
// interpreter: encode costs a short script's run three times over, and more under load, when the interpreter's code is
// out of the caches). A value is a NaN-boxed 64-bit JSValue (the 32-bit build): its payload, then its tag; probeLayout
// checks that at load, and the host reads nothing itself when it does not hold. The tag of a float64 lies outside
// [-16, 16]; a tag inside that range the host does not know (a NaN, a BigInt) makes hostEncode give up, as does a string
// that does not cross exactly (one holding NUL or a lone surrogate: its length differs, or it reads U+FFFD) and any
// exception: undefined then, and the guest's encode runs. Only the calls encode makes are made (the same built-ins,
// property reads, Object.keys, JSON.stringify), none of which runs script code (a straight-line script can define no
// getter, toJSON or proxy); their allocations are discarded with the rest by the next image copy.
const TAG_INT = 0, TAG_BOOL = 1, TAG_NULL = 2, TAG_UNDEFINED = 3, TAG_EXCEPTION = 6, TAG_OBJECT = -1, TAG_STRING = -7, TAG_SYMBOL = -8;
function i32At(em, addr) {
  const heap = em.HEAPU8;
  return heap[addr] | (heap[addr + 1] << 8) | (heap[addr + 2] << 16) | (heap[addr + 3] << 24);
}
const tagAt = (em, value) => i32At(em, value + 4);
const valueAt = (em, value) => i32At(em, value);
/** Whether the object at value is callable (typeof "function"). */
function callable(em, p, value) {
  return em.HEAPU8[em._QTS_Typeof(p.ctx, value)] === 102;
}
/** fn.call(self, arg), through argv's first slot. */
function callOne(em, p, fn, self, arg, argv) {
  put32(em.HEAPU8, argv, arg);
  return em._QTS_Call(p.ctx, fn, self, 1, argv);
}
/**
 * A string value as the host's string, read from its JSString (a 32-bit length word at +4: the length in its low 31
 * bits, 16-bit characters when the top bit is set; the characters from +16; probeLayout checks it), or undefined when
 * it holds NUL or a lone surrogate (the guest's encode decides those).
 */
function hostString(em, p, value) {
  const str = valueAt(em, value);
  const head = i32At(em, str + 4);
  const length = head & 0x7fffffff;
  const heap = em.HEAPU8;
  const at = str + 16;
  let text;
  if (head < 0) {
    if (length <= 64) {
      text = '';
      for (let i = 0; i < length; i++) text += String.fromCharCode(heap[at + 2 * i] | (heap[at + 2 * i + 1] << 8));
    } else text = Buffer.from(heap.buffer, heap.byteOffset + at, length * 2).toString('utf16le');
    if (!text.isWellFormed()) return undefined;
  } else if (length <= 64) {
    text = '';
    for (let i = 0; i < length; i++) text += String.fromCharCode(heap[at + i]);
  } else text = Buffer.from(heap.buffer, heap.byteOffset + at, length).toString('latin1');
  return text.length !== length || text.indexOf('\\u0000') !== -1 ? undefined : text;
}
/** enc(v) of the guest's encode for the value at value, or undefined. */
function hostEnc(em, p, value, argv) {
  const tag = tagAt(em, value);
  switch (tag) {
    case TAG_INT: return 'n' + valueAt(em, value) + ';';
    case TAG_BOOL: return valueAt(em, value) ? 't' : 'f';
    case TAG_NULL: return 'z';
    case TAG_UNDEFINED: case TAG_SYMBOL: return 'u';
    case TAG_STRING: {
      const text = hostString(em, p, value);
      return text === undefined ? undefined : 's' + text.length + ':' + text;
    }
    case TAG_OBJECT: {
      if (callable(em, p, value)) return 'u';
      const json = callOne(em, p, p.stringify, p.json, value, argv);
      const jsonTag = tagAt(em, json);
      if (jsonTag === TAG_UNDEFINED) return 'u';
      if (jsonTag !== TAG_STRING) return giveUp(em, p, json);
      const text = hostString(em, p, json);
      return text === undefined ? undefined : 'j' + text.length + ':' + text;
    }
    default: {
      if (tag >= -16 && tag <= 16) return giveUp(em, p, value);
      const n = em._QTS_GetFloat64(p.ctx, value);
      return Number.isFinite(n) ? 'n' + n + ';' : 'z';
    }
  }
}
/** Undefined; clears the guest's pending exception when value is one. */
function giveUp(em, p, value) {
  if (tagAt(em, value) === TAG_EXCEPTION) em._QTS_ResolveException(p.ctx, value);
  return undefined;
}
/** What encode() returns after runScript gave flags (1: doc, 2: conditions), or undefined. */
function hostEncode(em, p, flags, argv) {
  const c = p.ctx;
  const name = p.name;
  let s;
  const frappe = em._QTS_GetProp(c, p.global, name.frappe);
  const frappeTag = tagAt(em, frappe);
  if (frappeTag === TAG_NULL || frappeTag === TAG_UNDEFINED) s = 'u';
  else if (frappeTag === TAG_EXCEPTION) return giveUp(em, p, frappe);
  else {
    const response = em._QTS_GetProp(c, frappe, name.response);
    const responseTag = tagAt(em, response);
    if (responseTag === TAG_EXCEPTION) return giveUp(em, p, response);
    if (responseTag === TAG_OBJECT && !callable(em, p, response)) {
      s = hostEnc(em, p, em._QTS_GetProp(c, response, name.message), argv);
      if (s === undefined) return undefined;
    } else s = 'u';
  }
  if ((flags & 1) === 0) s += '-';
  else {
    const d = em._QTS_GetProp(c, p.global, name.doc);
    let plain = tagAt(em, d) === TAG_OBJECT && !callable(em, p, d);
    if (plain) {
      const isArray = callOne(em, p, p.isArray, p.undefined, d, argv);
      if (tagAt(em, isArray) !== TAG_BOOL) return giveUp(em, p, isArray);
      const toJSON = em._QTS_GetProp(c, d, name.toJSON);
      if (tagAt(em, toJSON) === TAG_EXCEPTION) return giveUp(em, p, toJSON);
      plain = valueAt(em, isArray) === 0 && tagAt(em, toJSON) === TAG_UNDEFINED;
    }
    if (plain) {
      const keys = callOne(em, p, p.keys, p.undefined, d, argv);
      if (tagAt(em, keys) !== TAG_OBJECT) return giveUp(em, p, keys);
      // The count, in argv's second slot.
      if (em._QTS_GetLength(c, argv + 4, keys) !== 0) return undefined;
      const count = i32At(em, argv + 4);
      s += 'o' + count + ';';
      for (let i = 0; i < count; i++) {
        const key = em._QTS_GetPropNumber(c, keys, i);
        if (tagAt(em, key) !== TAG_STRING) return giveUp(em, p, key);
        const k = hostString(em, p, key);
        if (k === undefined) return undefined;
        const v = hostEnc(em, p, em._QTS_GetProp(c, d, key), argv);
        if (v === undefined) return undefined;
        s += k.length + ':' + k + v;
      }
    } else {
      const v = hostEnc(em, p, d, argv);
      if (v === undefined) return undefined;
      s += v;
    }
  }
  if ((flags & 2) === 0) return s + '-';
  const v = hostEnc(em, p, em._QTS_GetProp(c, p.global, name.conditions), argv);
  return v === undefined ? undefined : s + v;
}

/**
 * Whether values are laid out as hostEncode reads them: run on a sandbox after its image was taken (the next acquire
 * copies the image back over what this leaves).
 */
function probeLayout(sb) {
  try {
    const em = sb.mod.module;
    const c = sb.ptr.ctx;
    const r = sb.ctx.evalCode('[undefined, null, true, 5, 1.5, "ab", {}, -0, 2147483648, () => 1, "\\u00e9\\ud83d\\ude00", "xy".repeat(40), "\\u0100".repeat(70)]', 'probe.js');
    if (r.error) return false;
    const at = (i) => em._QTS_GetPropNumber(c, r.value.value, i);
    const is = (i, tag, value) => tagAt(em, at(i)) === tag && (value === undefined || valueAt(em, at(i)) === value);
    const float = (i, n) => { const t = tagAt(em, at(i)); return (t < -16 || t > 16) && Object.is(em._QTS_GetFloat64(c, at(i)), n); };
    return is(0, TAG_UNDEFINED) && is(1, TAG_NULL) && is(2, TAG_BOOL, 1) && is(3, TAG_INT, 5) && float(4, 1.5) &&
      is(5, TAG_STRING) && hostString(em, sb.ptr, at(5)) === 'ab' && is(6, TAG_OBJECT) && !callable(em, sb.ptr, at(6)) &&
      is(10, TAG_STRING) && hostString(em, sb.ptr, at(10)) === '\\u00e9\\ud83d\\ude00' && is(11, TAG_STRING) &&
      hostString(em, sb.ptr, at(11)) === 'xy'.repeat(40) && is(12, TAG_STRING) && hostString(em, sb.ptr, at(12)) === '\\u0100'.repeat(70) &&
      float(7, -0) && float(8, 2147483648) && is(9, TAG_OBJECT) && callable(em, sb.ptr, at(9));
  } catch (e) {
    return false;
  }
}

/**
 * Inline, each straight-line script is compiled once: as the body of a function, in the fresh sandbox, whose memory is
 * then copied as the script's own image. A call copies that image back and calls the function, so nothing is parsed
 * per call and each call still starts from a never-used context. The wrapper cannot be broken out of: a straight-line
 * script's brackets, strings, templates and comments all close. Its top-level declarations are the function's own,
 * which a straight-line script cannot tell (it may not declare frappe, doc or conditions, nor name this).
 */
const compiledScripts = new Map();
const MAX_COMPILED = 32;
/** The source last moved to the end of compiledScripts (a script called again and again is not moved each time). */
let lastCompiled;
function compiledScript(job) {
  let entry = compiledScripts.get(job.source);
  if (entry) {
    // Most recently used last: the first is the one to drop.
    if (job.source !== lastCompiled) {
      compiledScripts.delete(job.source);
      compiledScripts.set(job.source, entry);
      lastCompiled = job.source;
    }
    return entry;
  }
  if (!kept.image) return undefined;
  const sb = acquire(job.limits);
  const r = sb.ctx.evalCode('(function () {' + job.source + '\\n})', job.filename);
  if (r.error) return undefined;
  const image = imageOf(sb);
  if (!image) return undefined;
  // The function's handle is never freed: it lives in this image only, and is used with it only.
  entry = { image, fn: r.value };
  if (compiledScripts.size >= MAX_COMPILED) compiledScripts.delete(compiledScripts.keys().next().value);
  compiledScripts.set(job.source, entry);
  lastCompiled = job.source;
  return entry;
}

if (INLINE) {
  // The run of one job on this (the event loop) thread: undefined when QuickJS is not loaded yet or the script needs a
  // host call; otherwise the outcome. The caller bounds the run through job.limits (wall clock; no CPU clock read).
  let loaded;
  const watch = () => { const p = ready; loaded = p; p.then((l) => { if (ready === p) kept = l; }, () => {}); };
  watch();
  workerData.exports = {
    ready: () => ready.then(() => undefined),
    guestNames: () => guestNames(kept.mod),
    hostReads: (on) => { if (kept && kept.sb) kept.sb.hostReads = on && kept.sb.layoutChecked; return kept && kept.sb ? kept.sb.hostReads : false; },
    forget: (source) => { compiledScripts.delete(source); if (lastCompiled === source) lastCompiled = undefined; },
    runInline(job) {
      if (!kept || ready !== loaded) return undefined;
      needsWorker = false;
      let outcome;
      try {
        const compiled = compiledScript(job);
        if (!compiled) return undefined;
        outcome = runCompiled(job, compiled);
      } catch (e) {
        ready = load();
      }
      if (ready !== loaded) { kept = undefined; compiledScripts.clear(); lastCompiled = undefined; watch(); return undefined; }
      return needsWorker ? undefined : outcome;
    },
  };
} else {
  parentPort.on('message', (job) => {
    ready.then((loaded) => {
      kept = loaded;
      let outcome;
      cpuStart[0] = threadCpuMs();
      try {
        outcome = job.kind === 'compile' ? compile(job) : run(job);
        const used = threadCpuMs() - cpuStart[0];
        if (!Number.isNaN(used)) outcome.cpuMs = used;
      } catch (e) {
        // A QuickJS module that failed this way is not reused: the next job loads a fresh one.
        ready = load();
        outcome = { ok: false, kind: 'script', message: 'InternalError: ' + String(e && e.message) };
      }
      post({ t: 'done', id: job.id, outcome });
    }, (e) => {
      ready = load();
      post({ t: 'done', id: job.id, outcome: { ok: false, kind: 'script', message: 'QuickJS did not load: ' + String(e && e.message) } });
    });
  });
}
`;
