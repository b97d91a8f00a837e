// Runs one load scenario: a preflight request (must be 2xx), then bench/load-worker.ts pinned to the load core.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LoadResult, LoadSpec } from '../load-worker';
import { cpuMs, type Pinning, pinned, runToEnd } from './procs';

const WORKER = path.join(__dirname, '..', 'load-worker.ts');

/** Sends the request once and fails with the response when it is not 2xx (a load run over errors measures nothing). */
export async function preflight(spec: LoadSpec, label: string): Promise<void> {
  const res = await fetch(spec.url, { method: spec.method ?? 'GET', headers: spec.headers, body: spec.body });
  const text = await res.text();
  if (res.status < 200 || res.status >= 300)
    throw new Error(
      `${label}: preflight ${spec.method ?? 'GET'} ${spec.url} answered ${res.status}: ${text.slice(0, 500)}`,
    );
}

/** A load run's figures, with the server's CPU use during the measured run when its pid is known. */
export interface Measured extends LoadResult {
  /** Server CPU time per request, in microseconds (hardly moved by other processes competing for the core). */
  cpuUsPerReq?: number;
  /** Server CPU time / wall time of the measured run, in % (well under 100: the server waited, or was starved). */
  cpuPct?: number;
  /** 1-minute load average when the run started (other jobs on the machine skew req/s). */
  loadavg: number;
}

/** Runs the load worker (warm-up, then the measured run) and returns its figures. */
export async function runLoad(
  pinning: Pinning,
  spec: LoadSpec,
  label: string,
  serverPid?: number,
): Promise<Measured> {
  await preflight(spec, label);
  // A spec past what one argument may hold (128 KiB on Linux: thousands of paths) goes by file, as `@<file>`.
  let text = JSON.stringify(spec);
  const dir = text.length > 100_000 ? mkdtempSync(path.join(os.tmpdir(), 'load-spec-')) : undefined;
  if (dir) {
    writeFileSync(path.join(dir, 'spec.json'), text);
    text = `@${path.join(dir, 'spec.json')}`;
  }
  const [cmd, args] = pinned(pinning, pinning.loadCore, process.execPath, ['--import', 'tsx', WORKER, text]);
  let cpuStart: number | undefined;
  let cpuEnd: number | undefined;
  const loadavg = os.loadavg()[0] ?? 0;
  const r = await runToEnd(cmd, args, {
    timeoutMs: (spec.seconds + spec.warmupSeconds + 60) * 1000,
    label: `load ${label}`,
    onLine: (line) => {
      if (serverPid === undefined) return;
      if (line === 'measuring') cpuStart = cpuMs(serverPid);
      else if (line.startsWith('{')) cpuEnd = cpuMs(serverPid);
    },
  }).finally(() => dir && rmSync(dir, { recursive: true, force: true }));
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (r.code !== 0 || !line.startsWith('{'))
    throw new Error(
      `load ${label} failed (exit ${r.code}):\n${r.stderr.slice(-2000)}${r.stdout.slice(-2000)}`,
    );
  const result = JSON.parse(line) as LoadResult;
  const measured: Measured = { ...result, loadavg };
  if (cpuStart !== undefined && cpuEnd !== undefined && result.total > 0) {
    measured.cpuUsPerReq = ((cpuEnd - cpuStart) * 1000) / result.total;
    measured.cpuPct = (100 * (cpuEnd - cpuStart)) / (result.durationS * 1000);
  }
  return measured;
}
