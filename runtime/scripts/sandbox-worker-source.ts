// The JavaScript a sandbox worker thread runs (eval, so it needs neither tsx nor the runtime bundle): it loads QuickJS
// (WebAssembly) once and runs each job in a fresh QuickJS runtime and context with hard limits. Host calls block the
// worker (Atomics.wait) until the main thread answers, so the guest sees them as plain synchronous functions. The CPU
// budget is read from this thread's own CPU clock (Linux: /proc/thread-self/schedstat), so waiting for host calls or
// being descheduled on a busy machine is not charged; the wall clock outside host calls is only the backstop.

/** The worker thread's program (plain CommonJS JavaScript). */
export const WORKER_SOURCE = `
const { parentPort, workerData, receiveMessageOnPort } = require('node:worker_threads');
const { newQuickJSWASMModule, RELEASE_SYNC } = require(workerData.quickjs);
const fs = require('node:fs');
const signal = new Int32Array(workerData.signal, 0, 2);
const cpuStart = new Float64Array(workerData.signal, 8, 1);
const replyPort = workerData.replyPort;

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
let modulePromise = newQuickJSWASMModule(RELEASE_SYNC);
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

function compile(mod, job) {
  const rt = mod.newRuntime();
  try {
    rt.setMemoryLimit(job.limits.memoryBytes);
    rt.setMaxStackSize(job.limits.stackBytes);
    overLimit = undefined;
    rt.setInterruptHandler(budget(job.limits, Date.now(), cpuStart[0], () => 0));
    const ctx = rt.newContext();
    try {
      const r = ctx.evalCode(job.source, job.filename, { compileOnly: true });
      if (r.error) {
        const e = errorText(ctx, r.error);
        r.error.dispose();
        return { ok: false, kind: 'syntax', error: e };
      }
      r.value.dispose();
      return { ok: true };
    } finally {
      ctx.dispose();
    }
  } finally {
    rt.dispose();
  }
}

// Only these language features exist in a guest: no typed arrays (no SharedArrayBuffer or Atomics), no Proxy. Promise
// jobs run after the script, under the same limits (at most MAX_JOBS of them); a promise still pending then is dropped
// with the context. There are no modules: an import() reaches the loader below, which fails the call.
const INTRINSICS = { BaseObjects: true, Date: true, Eval: true, StringNormalize: true, RegExp: true, JSON: true, MapSet: true, Promise: true };

const MAX_JOBS = 100000;

const pad = (n, w) => String(n).padStart(w || 2, '0');
const dateText = (d) => d.getUTCFullYear() + '-' + pad(d.getUTCMonth() + 1) + '-' + pad(d.getUTCDate());

// The limit a job ran into ('cpu' or 'wall'), read by run(); set by the interrupt handler.
let overLimit;

/**
 * The interrupt check of a job: true once its thread CPU time passes limits.cpuMs, or its wall time outside host calls
 * passes limits.wallMs. The CPU clock is read only once the job has run cpuMs of wall time (it cannot have used more
 * CPU than that), and then at most every 5 ms.
 */
function budget(limits, started, cpu0, hostTime) {
  let nextRead = started + limits.cpuMs;
  return () => {
    if (overLimit) return true;
    const now = Date.now();
    if (now - started - hostTime() > limits.wallMs) overLimit = 'wall';
    else if (now >= nextRead) {
      nextRead = now + 5;
      const used = threadCpuMs() - cpu0;
      // Without a CPU clock, the wall time outside host calls stands in for it.
      if (Number.isNaN(used) ? now - started - hostTime() > limits.cpuMs : used > limits.cpuMs) overLimit = 'cpu';
    }
    return overLimit !== undefined;
  };
}

function run(mod, job) {
  const limits = job.limits;
  const rt = mod.newRuntime();
  const started = Date.now();
  const cpu0 = cpuStart[0];
  let hostMs = 0;
  let hostCalls = 0;
  let logBytes = 0;
  const logs = [];
  overLimit = undefined;
  rt.setMemoryLimit(limits.memoryBytes);
  rt.setMaxStackSize(limits.stackBytes);
  rt.setInterruptHandler(budget(limits, started, cpu0, () => hostMs));
  let imported = false;
  rt.setModuleLoader(() => {
    imported = true;
    return { error: new Error('import() is not available in Server Scripts') };
  });
  const ctx = rt.newContext({ intrinsics: INTRINSICS });
  const handles = [];
  const keep = (h) => { handles.push(h); return h; };
  // Errors this worker threw into the guest (frappe.throw, failed host calls): an uncaught one is reported as itself.
  const thrown = [];
  const json = keep(ctx.getProp(ctx.global, 'JSON'));
  const jsonParse = keep(ctx.getProp(json, 'parse'));
  const jsonStringify = keep(ctx.getProp(json, 'stringify'));
  const fromJson = (text) => {
    const r = ctx.callFunction(jsonParse, json, keep(ctx.newString(text)));
    if (r.error) throw r.error;
    return keep(r.value);
  };
  const toJson = (h) => {
    const r = ctx.callFunction(jsonStringify, json, h);
    if (r.error) { const e = errorText(ctx, r.error); r.error.dispose(); throw new Error(e.name + ': ' + e.message); }
    const out = ctx.typeof(r.value) === 'string' ? ctx.getString(r.value) : undefined;
    r.value.dispose();
    return out;
  };
  const raise = (info) => {
    const e = ctx.newError({ name: info.excType || 'Error', message: String(info.message) });
    thrown.push({ handle: e.dup(), info });
    if (thrown.length > 64) thrown.shift().handle.dispose();
    return { error: e };
  };
  const text = (h) => {
    if (ctx.typeof(h) === 'string') return ctx.getString(h);
    try { const t = toJson(h); return t === undefined ? String(ctx.dump(h)) : t; } catch (x) { return '[unprintable]'; }
  };
  const hostCall = (name, argHandles) => {
    if (++hostCalls > limits.maxHostCalls) return raise({ kind: 'script', message: 'Server script made too many calls' });
    const args = [];
    for (const h of argHandles) {
      const t = ctx.typeof(h) === 'undefined' ? 'null' : toJson(h);
      args.push(t === undefined ? 'null' : t);
    }
    const argsJson = '[' + args.join(',') + ']';
    if (argsJson.length > limits.maxResultBytes) return raise({ kind: 'script', message: 'Server script call arguments are too large' });
    const mine = ++seq;
    const t0 = Date.now();
    Atomics.store(signal, 0, 0);
    parentPort.postMessage({ t: 'host', id: job.id, seq: mine, name, args: argsJson });
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
    hostMs += Date.now() - t0;
    if (!reply) return raise({ kind: 'script', message: 'Server script call timed out' });
    const out = JSON.parse(reply.json);
    if (out.err) return raise(Object.assign({ kind: 'host' }, out.err));
    return fromJson(JSON.stringify(out.ok === undefined ? null : out.ok));
  };
  const fn = (target, name, impl) => {
    const f = keep(ctx.newFunction(name, impl));
    ctx.setProp(target, name, f);
  };
  const api = (target, name, hostName) => fn(target, name, (...a) => hostCall(hostName, a));
  try {
    const input = JSON.parse(job.input);
    const frappe = keep(ctx.newObject());
    ctx.setProp(frappe, 'form_dict', fromJson(JSON.stringify(input.form_dict || {})));
    const session = keep(ctx.newObject());
    ctx.setProp(session, 'user', keep(ctx.newString(String(input.user || 'Guest'))));
    ctx.setProp(frappe, 'session', session);
    ctx.setProp(frappe, 'response', keep(ctx.newObject()));
    api(frappe, 'get_list', 'get_list');
    api(frappe, 'get_doc', 'get_doc');
    api(frappe, 'new_doc', 'new_doc');
    const db = keep(ctx.newObject());
    api(db, 'get_value', 'get_value');
    api(db, 'set_value', 'set_value');
    api(db, 'count', 'count');
    ctx.setProp(frappe, 'db', db);
    fn(frappe, 'throw', (m) => raise({ kind: 'throw', message: m === undefined ? '' : text(m) }));
    fn(frappe, 'log', (...parts) => {
      if (logBytes >= limits.maxLogBytes) return;
      const line = parts.map(text).join(' ').slice(0, limits.maxLogBytes - logBytes);
      logBytes += line.length;
      logs.push(line);
      if (logBytes >= limits.maxLogBytes) logs.push('[log truncated]');
    });
    const utils = keep(ctx.newObject());
    fn(utils, 'now', () => {
      const d = new Date();
      return ctx.newString(dateText(d) + ' ' + pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes()) + ':' + pad(d.getUTCSeconds()) + '.' + pad(d.getUTCMilliseconds() * 1000, 6));
    });
    fn(utils, 'today', () => ctx.newString(dateText(new Date())));
    fn(utils, 'add_days', (dateH, daysH) => {
      const d = new Date(String(ctx.dump(dateH)).slice(0, 10) + 'T00:00:00Z');
      const days = Number(ctx.dump(daysH));
      if (isNaN(d.getTime()) || !Number.isFinite(days) || Math.abs(days) > 1e6)
        return raise({ kind: 'throw', message: 'add_days needs a date (YYYY-MM-DD) and a number of days' });
      d.setUTCDate(d.getUTCDate() + Math.trunc(days));
      return ctx.newString(dateText(d));
    });
    ctx.setProp(frappe, 'utils', utils);
    ctx.setProp(ctx.global, 'frappe', frappe);
    if (input.doc !== undefined) ctx.setProp(ctx.global, 'doc', fromJson(JSON.stringify(input.doc)));
    const r = ctx.evalCode(job.source, job.filename);
    if (r.error) {
      const err = keep(r.error);
      if (overLimit) return { ok: false, kind: 'timeout', limit: overLimit, logs };
      for (const t of thrown) {
        if (ctx.sameValue(t.handle, err)) {
          if (t.info.kind === 'throw') return { ok: false, kind: 'throw', message: t.info.message, logs };
          if (t.info.kind === 'host') return { ok: false, kind: 'host', error: { excType: t.info.excType, status: t.info.status, message: t.info.message }, logs };
          return { ok: false, kind: 'script', message: t.info.message, logs };
        }
      }
      const e = errorText(ctx, err);
      if (overLimit) return { ok: false, kind: 'timeout', limit: overLimit, logs };
      return { ok: false, kind: 'script', message: e.name + ': ' + e.message, logs };
    }
    keep(r.value);
    const jobs = rt.executePendingJobs(MAX_JOBS);
    if (jobs.error) jobs.error.dispose();
    if (overLimit) return { ok: false, kind: 'timeout', limit: overLimit, logs };
    if (imported) return { ok: false, kind: 'script', message: 'import() is not available in Server Scripts', logs };
    if (rt.hasPendingJob()) return { ok: false, kind: 'script', message: 'more than ' + MAX_JOBS + ' promise jobs', logs };
    // The result: frappe.response.message, and the globals doc and conditions, read as JSON (capped).
    const out = keep(ctx.newObject());
    const response = keep(ctx.getProp(keep(ctx.getProp(ctx.global, 'frappe')), 'response'));
    if (ctx.typeof(response) === 'object') ctx.setProp(out, 'message', keep(ctx.getProp(response, 'message')));
    if (input.doc !== undefined) ctx.setProp(out, 'doc', keep(ctx.getProp(ctx.global, 'doc')));
    if (input.conditions) ctx.setProp(out, 'conditions', keep(ctx.getProp(ctx.global, 'conditions')));
    const s = ctx.callFunction(jsonStringify, json, out);
    if (s.error) {
      const e = errorText(ctx, s.error);
      s.error.dispose();
      if (overLimit) return { ok: false, kind: 'timeout', limit: overLimit, logs };
      return { ok: false, kind: 'script', message: 'the result is not JSON: ' + e.name + ': ' + e.message, logs };
    }
    keep(s.value);
    if (ctx.typeof(s.value) !== 'string') return { ok: false, kind: 'script', message: 'the result is not JSON', logs };
    const length = ctx.getNumber(keep(ctx.getProp(s.value, 'length')));
    if (length > limits.maxResultBytes) return { ok: false, kind: 'result', logs };
    return { ok: true, json: ctx.getString(s.value), logs };
  } catch (e) {
    if (overLimit) return { ok: false, kind: 'timeout', limit: overLimit, logs };
    if (e && typeof e === 'object' && 'alive' in e) { const x = errorText(ctx, e); return { ok: false, kind: 'script', message: x.name + ': ' + x.message, logs }; }
    return { ok: false, kind: 'script', message: String(e && e.message), logs };
  } finally {
    for (const t of thrown) handles.push(t.handle);
    for (const h of handles.reverse()) { try { if (h.alive) h.dispose(); } catch (x) {} }
    try { ctx.dispose(); rt.dispose(); } catch (x) { modulePromise = newQuickJSWASMModule(RELEASE_SYNC); }
  }
}

parentPort.on('message', (job) => {
  modulePromise.then((mod) => {
    let outcome;
    cpuStart[0] = threadCpuMs();
    try {
      outcome = job.kind === 'compile' ? compile(mod, job) : run(mod, job);
      const used = threadCpuMs() - cpuStart[0];
      if (!Number.isNaN(used)) outcome.cpuMs = used;
    } catch (e) {
      // A QuickJS runtime that failed this way is not reused: the next job loads a fresh module.
      modulePromise = newQuickJSWASMModule(RELEASE_SYNC);
      outcome = { ok: false, kind: 'script', message: 'InternalError: ' + String(e && e.message) };
    }
    parentPort.postMessage({ t: 'done', id: job.id, outcome });
  }, (e) => parentPort.postMessage({ t: 'done', id: job.id, outcome: { ok: false, kind: 'script', message: 'QuickJS did not load: ' + String(e && e.message) } }));
});
`;
