// The sandbox pool's time limits: the CPU budget is the worker thread's own CPU clock (Linux schedstat), so a busy
// script is stopped by it while a script that only waits for host calls is not charged for the wait; the wall clock
// outside host calls is a separate backstop; a native call QuickJS cannot interrupt is ended by the watchdog.
import { existsSync } from 'node:fs';
import { SandboxPool, threadCpuMs } from '../../runtime/scripts/sandbox-pool';
import { DEFAULT_LIMITS, type HostReply, type ScriptLimits } from '../../runtime/scripts/sandbox-protocol';

const linux = existsSync('/proc/thread-self/schedstat');
const onLinux = linux ? test : test.skip;

let pool: SandboxPool;
beforeAll(() => {
  pool = new SandboxPool(2);
});
afterAll(async () => {
  await pool.close();
});

const input = JSON.stringify({ form_dict: {}, user: 'Administrator' });
const hostError = (): HostReply => ({ err: { excType: 'ServerScriptError', status: 500, message: 'x' } });
const noHost = () => Promise.reject(new Error('no host calls here'));
const limits = (over: Partial<ScriptLimits>): ScriptLimits => ({ ...DEFAULT_LIMITS, ...over });

onLinux('threadCpuMs reads a thread CPU clock that advances with work', () => {
  const before = threadCpuMs(process.pid);
  const until = Date.now() + 30;
  let x = 0;
  while (Date.now() < until) x++;
  expect(x).toBeGreaterThan(0);
  expect(threadCpuMs(process.pid)).toBeGreaterThan(before);
  expect(threadCpuMs(0)).toBeNaN();
  expect(threadCpuMs(2 ** 30)).toBeNaN();
});

onLinux('a busy script is stopped by its CPU budget, counted on the worker thread CPU clock', async () => {
  const out = await pool.run('while (true) {}', 'script.js', input, noHost, hostError, {
    limits: limits({ cpuMs: 200, wallMs: 120_000 }),
  });
  expect(out).toMatchObject({ ok: false, kind: 'timeout', limit: 'cpu' });
  expect(out.cpuMs).toBeGreaterThanOrEqual(200);
});

onLinux(
  'waiting for host calls is not charged: six 250 ms host calls fit a 500 ms CPU and wall budget',
  async () => {
    const host = () => new Promise<unknown>((resolve) => setTimeout(() => resolve(1), 250));
    const started = Date.now();
    const out = await pool.run(
      "let n = 0; for (let i = 0; i < 6; i++) n += frappe.db.count('ToDo'); frappe.response.message = n",
      'script.js',
      input,
      host,
      hostError,
      { limits: limits({ cpuMs: 500, wallMs: 500, graceMs: 100 }) },
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    expect(out).toMatchObject({ ok: true, json: '{"message":6}' });
    expect(out.cpuMs).toBeLessThan(500);
  },
);

test('the wall clock outside host calls is a separate backstop', async () => {
  const out = await pool.run('while (true) {}', 'script.js', input, noHost, hostError, {
    limits: limits({ cpuMs: 120_000, wallMs: 200 }),
  });
  expect(out).toMatchObject({ ok: false, kind: 'timeout', limit: 'wall' });
});

onLinux(
  'a native call QuickJS cannot interrupt is ended by the watchdog on the CPU budget; the pool keeps working',
  async () => {
    // Array.prototype.indexOf over a huge array-like runs in C without reaching the interrupt handler.
    const out = await pool.run(
      'frappe.response.message = Array.prototype.indexOf.call({ length: 2 ** 52 }, 1)',
      'script.js',
      input,
      noHost,
      hostError,
      { limits: limits({ cpuMs: 100, graceMs: 200, wallMs: 120_000 }) },
    );
    expect(out).toMatchObject({ ok: false, kind: 'timeout', limit: 'cpu' });
    const next = await pool.run("frappe.response.message = 'alive'", 'script.js', input, noHost, hostError);
    expect(next).toMatchObject({ ok: true, json: '{"message":"alive"}' });
  },
);

describe('each call starts from a pristine sandbox, whatever the call before it did (one worker)', () => {
  let one: SandboxPool;
  beforeAll(() => {
    one = new SandboxPool(1);
  });
  afterAll(async () => {
    await one.close();
  });
  const host = (name: string) => Promise.resolve(`host ${name}`);
  const run = async (source: string, over: Partial<ScriptLimits> = {}) =>
    one.run(source, 'script.js', input, host, hostError, { limits: limits(over) });
  const pristine = `frappe.response.message = [
    typeof leak, ({}).polluted, typeof [].push, JSON.stringify({ a: 1 }), typeof frappe.db,
    frappe.get_list('ToDo'), frappe.db.count('ToDo'), Symbol.keyFor(Symbol.for('kept')), frappe.response.before,
    typeof doc, Object.keys(frappe.form_dict).length, typeof Math.random(), 'x'.repeat(8 * 1024 * 1024).length,
  ]`;
  const expected = [
    'undefined',
    null,
    'function',
    '{"a":1}',
    'object',
    'host get_list',
    'host count',
    'kept',
    null,
    'undefined',
    0,
    'number',
    8 * 1024 * 1024,
  ];

  test('globals, prototypes, host functions, JSON, pending promises and garbage of one call are gone in the next', async () => {
    const dirty = await run(`
      globalThis.leak = 1; Object.prototype.polluted = 'yes'; Array.prototype.push = null;
      JSON.stringify = () => 'hijacked'; frappe.response.before = 'set';
      delete frappe.get_list; delete frappe.db; frappe.form_dict.extra = 1; globalThis.doc = {};
      Symbol.for('kept'); new Promise(() => {}).then(() => { globalThis.late = 1 });
      Promise.resolve().then(() => { globalThis.leak = 2 });
      let junk = []; for (let i = 0; i < 200000; i++) junk[i] = { i, s: 'x' + i }; junk = null;
    `);
    expect(dirty).toMatchObject({ ok: true });
    const clean = await run(pristine);
    expect(clean).toMatchObject({ ok: true });
    expect(JSON.parse((clean as { json: string }).json).message).toEqual(expected);
  });

  test('a call that ran out of memory, overflowed its stack, or was stopped by its budget leaves nothing behind', async () => {
    expect(await run("let s = 'x'; while (true) s = s + s")).toMatchObject({ ok: false });
    expect(await run('function f() { return f() } f()')).toMatchObject({ ok: false });
    // Its budget or its memory, whichever it reaches first.
    const filled = await run('const a = {}; let i = 0; while (true) a[i++] = i', { cpuMs: 100 });
    expect(filled.ok === false && filled.kind).toMatch(/^(timeout|memory)$/);
    const clean = await run(pristine);
    expect(JSON.parse((clean as { json: string }).json).message).toEqual(expected);
  });

  test('Math.random is not replayed from one call to the next', async () => {
    const values = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const out = await run('frappe.response.message = [Math.random(), Math.random()]');
      values.add((out as { json: string }).json);
    }
    expect(values.size).toBe(5);
  });
});

describe('waitMs: the event loop may wait, briefly and boundedly, for a job an idle worker took', () => {
  let one: SandboxPool;
  beforeAll(async () => {
    one = new SandboxPool(1);
    // Warm the worker (QuickJS loaded): a brief wait only applies to an idle worker.
    await one.run('1', 'script.js', input, noHost, hostError);
  });
  afterAll(async () => {
    await one.close();
  });
  const settledNow = (p: Promise<unknown>) => {
    const state = { settled: false };
    void p.then(() => (state.settled = true));
    return state;
  };

  test('a short script is settled before run() returns to the event loop', async () => {
    // On a busy machine the worker may not get a CPU within the wait: most of 20 tries settle at once, not always all.
    let now = 0;
    for (let i = 0; i < 20; i++) {
      const p = one.run("frappe.response.message = 'now'", 'script.js', input, noHost, hostError, {
        waitMs: 5,
      });
      const state = settledNow(p);
      await Promise.resolve();
      if (state.settled) now++;
      expect(await p).toMatchObject({ ok: true, json: '{"message":"now"}' });
    }
    expect(now).toBeGreaterThan(0);
  });

  test('without waitMs the outcome needs a turn of the event loop', async () => {
    const p = one.run("frappe.response.message = 'later'", 'script.js', input, noHost, hostError);
    const state = settledNow(p);
    await Promise.resolve();
    expect(state.settled).toBe(false);
    expect(await p).toMatchObject({ ok: true, json: '{"message":"later"}' });
  });

  test('a host call ends the wait (the event loop answers it); a runaway script is waited for asynchronously', async () => {
    const host = () => Promise.resolve(7);
    const withHost = one.run(
      "frappe.response.message = frappe.db.count('ToDo')",
      'script.js',
      input,
      host,
      hostError,
      { waitMs: 5 },
    );
    expect(await withHost).toMatchObject({ ok: true, json: '{"message":7}' });
    const runaway = one.run('while (true) {}', 'script.js', input, noHost, hostError, {
      waitMs: 5,
      limits: limits({ cpuMs: 100 }),
    });
    const state = settledNow(runaway);
    await Promise.resolve();
    expect(state.settled).toBe(false);
    expect(await runaway).toMatchObject({ ok: false, kind: 'timeout' });
  });
});
