// Runs one load scenario: a preflight request (must be 2xx), then bench/load-worker.ts pinned to the load core.
import path from 'node:path';
import type { LoadResult, LoadSpec } from '../load-worker';
import { type Pinning, pinned, runToEnd } from './procs';

const WORKER = path.join(__dirname, '..', 'load-worker.ts');

/** Sends the request once and fails with the response when it is not 2xx (a load run over errors measures nothing). */
export async function preflight(spec: LoadSpec, label: string): Promise<void> {
  const res = await fetch(spec.url, { method: spec.method ?? 'GET', headers: spec.headers, body: spec.body });
  const text = await res.text();
  if (res.status < 200 || res.status >= 300) throw new Error(`${label}: preflight ${spec.method ?? 'GET'} ${spec.url} answered ${res.status}: ${text.slice(0, 500)}`);
}

/** Runs the load worker and returns its figures. */
export async function runLoad(pinning: Pinning, spec: LoadSpec, label: string): Promise<LoadResult> {
  await preflight(spec, label);
  const [cmd, args] = pinned(pinning, pinning.loadCore, process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(spec)]);
  const r = await runToEnd(cmd, args, { timeoutMs: (spec.seconds + spec.warmupSeconds + 60) * 1000, label: `load ${label}` });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (r.code !== 0 || !line.startsWith('{')) throw new Error(`load ${label} failed (exit ${r.code}):\n${r.stderr.slice(-2000)}${r.stdout.slice(-2000)}`);
  return JSON.parse(line) as LoadResult;
}
