// Child processes of the bench: CPU pinning with taskset, start-and-wait-for-a-line, and cleanup on any exit.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { performance } from 'node:perf_hooks';

/** How children are pinned: servers on one core, the load generator on another. */
export interface Pinning {
  enabled: boolean;
  serverCore: string;
  loadCore: string;
  note: string;
}

/** Pins to cores 0 and 1 when `taskset` exists and both cores can be used; otherwise runs unpinned and says why. */
export function detectPinning(): Pinning {
  const probe = spawnSync('taskset', ['-c', '1', 'true'], { stdio: 'ignore' });
  if (probe.error)
    return {
      enabled: false,
      serverCore: '',
      loadCore: '',
      note: 'taskset not found: server and load generator run UNPINNED',
    };
  if (probe.status !== 0)
    return {
      enabled: false,
      serverCore: '',
      loadCore: '',
      note: 'taskset -c 1 failed (fewer than 2 usable cores?): server and load generator run UNPINNED',
    };
  return {
    enabled: true,
    serverCore: '0',
    loadCore: '1',
    note: 'server pinned to core 0 (taskset -c 0), load generator to core 1 (taskset -c 1)',
  };
}

/** The command line that runs `cmd args` on `core` (or unpinned). */
export function pinned(pinning: Pinning, core: string, cmd: string, args: string[]): [string, string[]] {
  return pinning.enabled ? ['taskset', ['-c', core, cmd, ...args]] : [cmd, args];
}

interface Tracked {
  child: ChildProcess;
  /** Spawned in its own process group (a tree such as npx → tsx → node); killed as a group. */
  group: boolean;
}

const live = new Set<Tracked>();
const tempPaths = new Set<string>();

function alive(t: Tracked): boolean {
  return t.child.exitCode === null && t.child.signalCode === null && t.child.pid !== undefined;
}

function signal(t: Tracked, sig: NodeJS.Signals): void {
  if (!alive(t)) return;
  try {
    if (t.group) process.kill(-(t.child.pid as number), sig);
    else t.child.kill(sig);
  } catch {
    // already gone
  }
}

/** Spawns a child that is killed when the bench exits, whatever the reason. */
export function spawnTracked(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; group?: boolean } = {},
): ChildProcess {
  const child = spawn(cmd, args, {
    env: opts.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.group ?? false,
  });
  const t: Tracked = { child, group: opts.group ?? false };
  live.add(t);
  child.once('exit', () => live.delete(t));
  return child;
}

/** The pids of the children still running (servers between their lines, a load worker while it runs). */
export function livePids(): number[] {
  return [...live].filter(alive).map((t) => t.child.pid as number);
}

/** Stops one child: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 3000): Promise<void> {
  const t = [...live].find((x) => x.child === child);
  if (!t || !alive(t)) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  signal(t, 'SIGTERM');
  const timer = setTimeout(() => signal(t, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Registers a file or folder to delete on exit. */
export function removeOnExit(p: string): void {
  tempPaths.add(p);
}

const atExit = new Set<() => void>();

/** Registers a synchronous clean-up step (e.g. dropping a bench database) for exit; returns its unregister. */
export function runAtExit(fn: () => void): () => void {
  atExit.add(fn);
  return () => atExit.delete(fn);
}

/**
 * Kills every live child (SIGKILL), runs the runAtExit steps and deletes the registered temp paths. Synchronous: safe
 * in 'exit' handlers.
 */
export function cleanupSync(): void {
  for (const t of live) signal(t, 'SIGKILL');
  live.clear();
  for (const fn of atExit) {
    try {
      fn();
    } catch {
      // best effort
    }
  }
  atExit.clear();
  for (const p of tempPaths) {
    try {
      rmSync(p, { recursive: true, force: true });
    } catch {
      // best effort
    }
  }
  tempPaths.clear();
}

/** Runs a bench entry point: cleans up children and temp paths, then exits with its code (1 on error). */
export function runMain(main: () => Promise<number>): void {
  main().then(
    (code) => {
      cleanupSync();
      process.exit(code);
    },
    (err: unknown) => {
      console.error(err);
      cleanupSync();
      process.exit(1);
    },
  );
}

let installed = false;
/** Cleans up on normal exit, Ctrl-C, SIGTERM, uncaught errors and a global time limit. */
export function installCleanup(timeLimitMs: number): void {
  if (installed) return;
  installed = true;
  process.on('exit', cleanupSync);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      console.error(`\nbench: ${sig}, stopping children`);
      cleanupSync();
      process.exit(130);
    });
  }
  process.on('uncaughtException', (err) => {
    console.error('bench: uncaught', err);
    cleanupSync();
    process.exit(1);
  });
  process.on('unhandledRejection', (err) => {
    console.error('bench: unhandled rejection', err);
    cleanupSync();
    process.exit(1);
  });
  setTimeout(() => {
    console.error(
      `bench: time limit of ${Math.round(timeLimitMs / 1000)} s reached (BENCH_TIME_LIMIT), stopping`,
    );
    cleanupSync();
    process.exit(1);
  }, timeLimitMs).unref();
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** A started server child. */
export interface Started {
  child: ChildProcess;
  pid: number;
  /** ms from spawn to the ready line. */
  readyMs: number;
  readyLine: string;
  /** Everything printed so far (last 64 kB). */
  output: () => string;
}

/** Spawns a server and resolves when a stdout/stderr line matches `ready`; rejects if it exits first or takes longer than `timeoutMs`. */
export function startServer(
  cmd: string,
  args: string[],
  opts: { env: NodeJS.ProcessEnv; ready: RegExp; timeoutMs: number; label: string },
): Promise<Started> {
  const t0 = performance.now();
  const child = spawnTracked(cmd, args, { env: opts.env });
  let out = '';
  const output = () => out;
  return new Promise<Started>((resolve, reject) => {
    let done = false;
    let pending = '';
    const finish = (err: Error | null, line = '') => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) {
        void stopChild(child, 500);
        reject(err);
      } else
        resolve({
          child,
          pid: child.pid as number,
          readyMs: performance.now() - t0,
          readyLine: line,
          output,
        });
    };
    const onData = (chunk: Buffer) => {
      const s = chunk.toString();
      out = (out + s).slice(-65536);
      if (done) return;
      pending += s;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (opts.ready.test(line)) return finish(null, line.trim());
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (err) => finish(new Error(`${opts.label}: could not start: ${err.message}`)));
    child.once('exit', (code, sig) =>
      finish(new Error(`${opts.label} exited (${sig ?? code}) before it was ready:\n${out.slice(-4000)}`)),
    );
    const timer = setTimeout(
      () => finish(new Error(`${opts.label} was not ready after ${opts.timeoutMs} ms:\n${out.slice(-4000)}`)),
      opts.timeoutMs,
    );
  });
}

/** Runs a command to completion (its own process group, killed on timeout); returns its output and wall time. */
export function runToEnd(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; timeoutMs: number; label: string; onLine?: (line: string) => void },
): Promise<{ code: number | null; ms: number; stdout: string; stderr: string }> {
  const t0 = performance.now();
  const child = spawnTracked(cmd, args, { env: opts.env, group: true });
  let stdout = '';
  let stderr = '';
  let pending = '';
  child.stdout?.on('data', (c: Buffer) => {
    const text = c.toString();
    stdout = (stdout + text).slice(-1 << 20);
    if (!opts.onLine) return;
    const lines = (pending + text).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) opts.onLine(line);
  });
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-1 << 20)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stopChild(child, 1000);
      reject(new Error(`${opts.label} did not finish within ${opts.timeoutMs} ms`));
    }, opts.timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${opts.label}: ${err.message}`));
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, ms: performance.now() - t0, stdout, stderr });
    });
  });
}

/**
 * CPU time (user + system, ms) of this process's children that have ended and been waited for (their own waited-for
 * children included), from /proc/self/stat.
 */
export function childrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 of proc(5) (cutime, cstime), in clock ticks of 10 ms on Linux.
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/** Resident set size of a process in kB (VmRSS), or undefined when /proc is not readable. */
export function rssKb(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

let clockTicks: number | undefined;
/** CPU time (user + system) a process has used, in ms, or undefined when /proc is not readable. */
export function cpuMs(pid: number): number | undefined {
  try {
    clockTicks ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
  } catch {
    return undefined;
  }
}

/**
 * BENCH_SHIELD=-N (Linux, root; the 500,000-row scenario): the nice value, -20 to 19, to give this process's autogroup
 * (its session, hence the services it starts) and the load workers' own, so that other sessions' processes on a
 * shared machine hardly delay them and what is left of a latency tail is the service's own doing. Returns the value
 * and a function restoring this autogroup's previous nice, or undefined when BENCH_SHIELD is unset.
 */
export function shieldSelf(): { nice: number; restore(): void } | undefined {
  const raw = process.env.BENCH_SHIELD;
  if (raw === undefined || raw === '') return undefined;
  const nice = Number(raw);
  if (!Number.isInteger(nice) || nice < -20 || nice > 19)
    throw new Error(`BENCH_SHIELD must be a whole number from -20 to 19, got ${raw}`);
  const file = '/proc/self/autogroup';
  const before = /nice (-?\d+)/.exec(readFileSync(file, 'utf8'))?.[1] ?? '0';
  try {
    writeFileSync(file, String(nice));
  } catch (err) {
    throw new Error(
      `BENCH_SHIELD: cannot set ${file} (Linux with autogroup, as root): ${(err as Error).message}`,
    );
  }
  // Restored at any exit too: the autogroup is the caller's whole session (a shell's, say), not this process alone.
  const restore = () => {
    try {
      writeFileSync(file, before);
    } catch {
      // already restored, or the session is gone
    }
  };
  const unregister = runAtExit(restore);
  process.once('exit', restore);
  return {
    nice,
    restore: () => {
      unregister();
      restore();
    },
  };
}
