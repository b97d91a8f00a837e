// Profiles one request of the service under load:
// `npx tsx bench/profile.ts [get-v1|get-v2|create|create-idem|update|list-v1|list-v2|count|file|startup] [GENERATED_DIR]`
// (`file`: GET of a 10 KB public file /files/…, no credentials)
// (`bulk-insert`, `bulk-update`: one queued bulk job of PROFILE_ROWS ToDos, no other load; the window is the job's run).
// PROFILE_WEBHOOK (JSON fields of a Webhook, saved first), PROFILE_RECEIVER_PORT (a receiver answering 204 here) and
// PROFILE_SITE_CONFIG (a site config file, e.g. one allowing 127.0.0.1 in webhook_allowed_hosts): creates that fire it.
// (`startup`: from spawn to the "serving" line, no load).
// Starts the server (pinned, fresh SQLite, `node --cpu-prof`), seeds ToDo rows, runs the load worker, stops the server
// and prints where the server's CPU time went (self time by function, and by file or package).
// Environment: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 50), PROFILE_ROWS (rows to seed, default 1000),
// BENCH_DB=mysql (the service on a fresh MariaDB database bench_<pid>_<n> on BENCH_MYSQL_URL's server, dropped after);
// BENCH_DB=postgres likewise on BENCH_POSTGRES_URL's server.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { runLoad } from './lib/load';
import { runMain, detectPinning, freePort, installCleanup, removeOnExit, stopChild } from './lib/procs';
import {
  apiToken,
  benchDbKind,
  benchMysqlDatabase,
  benchPostgresDatabase,
  seedTodos,
  startService,
} from './lib/service';
import { uploadBytes } from './lib/files';
import { bulkJob } from './lib/bulk';

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const ROOT = path.join(__dirname, '..');

function where(url: string): string {
  if (!url) return '(native)';
  const file = url.replace(/^file:\/\//, '');
  const nm = file.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = file.slice(nm + 'node_modules/'.length).split('/');
    return `npm:${rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (file.startsWith('node:')) return file;
  return path.relative(ROOT, file) || file;
}

/** Samples kept: those taken between `fromEndUs` and `toEndUs` microseconds before the profile's end. */
export interface ProfileWindow {
  fromEndUs: number;
  toEndUs: number;
}

/** Calls `visit` with each sample's node id and duration (us), within `window` when given. */
function eachSample(
  profile: CpuProfile,
  window: ProfileWindow | undefined,
  visit: (id: number, us: number) => void,
): void {
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    if (window && (t < profile.endTime - window.fromEndUs || t > profile.endTime - window.toEndUs)) return;
    visit(id, dt);
  });
}

/**
 * The measured part of a profile: the last `seconds` of a load (after its warm-up) that ended at `loadEnd`, in a
 * profile that ended when the server stopped at `stopped` (both performance.now() ms).
 */
export function measuredWindow(loadEnd: number, stopped: number, seconds: number): ProfileWindow {
  return { fromEndUs: (stopped - loadEnd + seconds * 1000) * 1000, toEndUs: (stopped - loadEnd) * 1000 };
}

/** A function's name and place; anonymous functions also by column (a bundle keeps every function on one line). */
function functionKey({ functionName, url, lineNumber, columnNumber }: ProfileNode['callFrame']): string {
  const place = url ? `:${lineNumber + 1}${functionName ? '' : `:${columnNumber + 1}`}` : '';
  return `${functionName || '(anonymous)'}  ${where(url)}${place}`;
}

/** Self time (us) by function within `window`. */
export function selfTimeByFunction(profile: CpuProfile, window?: ProfileWindow): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const fn = new Map<string, number>();
  eachSample(profile, window, (id, us) => {
    const n = byId.get(id);
    if (!n) return;
    const key = functionKey(n.callFrame);
    fn.set(key, (fn.get(key) ?? 0) + us);
  });
  return fn;
}

/**
 * Self time by function and by file/package, and inclusive time of the project's functions, in ms, from a .cpuprofile.
 * `window` keeps the samples taken between `fromEndUs` and `toEndUs` microseconds before the profile's end.
 */
export function summarize(profile: CpuProfile, top = 30, window?: ProfileWindow): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  const inclusive = new Map<string, number>();
  eachSample(profile, window, (id, dt) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
    const seen = new Set<string>();
    for (let n = byId.get(id); n; n = byId.get(parent.get(n.id) ?? -1)) {
      const { functionName, url, lineNumber } = n.callFrame;
      const w = where(url);
      if (!w.startsWith('runtime/') && !w.startsWith('generated') && !w.startsWith('bench/tmp')) continue;
      const key = `${functionName || '(anonymous)'}  ${w}:${lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + dt);
    }
  });
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const fn = selfTimeByFunction(profile, window);
  const file = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const w = where(byId.get(id)?.callFrame.url ?? '');
    file.set(w, (file.get(w) ?? 0) + us);
  }
  const idle = [...selfUs]
    .filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)')
    .reduce((a, [, us]) => a + us, 0);
  const fmt = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([k, us]) =>
          `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`,
      )
      .join('\n');
  return [
    `profile: ${(total / 1e3).toFixed(0)} ms sampled, ${(idle / 1e3).toFixed(0)} ms idle`,
    '',
    'self time by function:',
    fmt(fn),
    '',
    'self time by file / package:',
    fmt(file),
    '',
    'inclusive time of project functions (runtime/, generated code):',
    fmt(inclusive),
  ].join('\n');
}

/** One request of a load scenario. */
export interface ScenarioRequest {
  url: string;
  method?: 'POST' | 'PUT';
  headers: Record<string, string>;
  body?: string;
  /** `[<id>]` in the request is a new id on every request (a new Idempotency-Key per create). */
  idReplacement?: boolean;
}

/** The request a scenario sends to the service at `base` with `auth`; `name` is a seeded ToDo. */
export function scenarioRequest(kind: string, base: string, auth: string, name: string): ScenarioRequest {
  const h = { authorization: auth };
  const filter = encodeURIComponent(JSON.stringify({ status: 'Open' }));
  const specs: Record<string, ScenarioRequest> = {
    'get-v1': { url: `${base}/api/resource/ToDo/${name}`, headers: h },
    'get-v2': { url: `${base}/api/v2/document/ToDo/${name}`, headers: h },
    create: {
      url: `${base}/api/resource/ToDo`,
      method: 'POST',
      headers: { ...h, 'content-type': 'application/json' },
      body: '{"description":"profile","priority":"Low"}',
    },
    // The same create with a new Idempotency-Key each time.
    'create-idem': {
      url: `${base}/api/resource/ToDo`,
      method: 'POST',
      headers: { ...h, 'content-type': 'application/json', 'idempotency-key': '[<id>]' },
      body: '{"description":"profile","priority":"Low"}',
      idReplacement: true,
    },
    // A tracked ToDo's update, each changing its description (a Version per request).
    update: {
      url: `${base}/api/resource/ToDo/${name}`,
      method: 'PUT',
      headers: { ...h, 'content-type': 'application/json' },
      body: '{"description":"[<id>]"}',
      idReplacement: true,
    },
    'list-v1': {
      url: `${base}/api/resource/ToDo?filters=${encodeURIComponent('[["status","=","Open"]]')}&order_by=modified%20desc`,
      headers: h,
    },
    'list-v2': { url: `${base}/api/v2/document/ToDo?filters=${filter}&order_by=modified%20desc`, headers: h },
    count: { url: `${base}/api/v2/doctype/ToDo/count?filters=${filter}`, headers: h },
    // Needs a registry with bench/doctypes: `npx tsx generator/cli.ts --doctypes doctypes --doctypes bench/doctypes --out bench/tmp/feature-gen`.
    method: { url: `${base}/api/method/bench.bench_probe.bench_probe.echo?word=hi`, headers: h },
    // With PROFILE_SCRIPT='{"name":"echo","script_type":"API","api_method":"bench_echo","script":"..."}' (saved first).
    script: { url: `${base}/api/method/bench_echo?word=hi`, headers: h },
  };
  const spec = specs[kind];
  if (!spec) throw new Error(`unknown scenario ${kind}: one of ${Object.keys(specs).join(', ')}`);
  return spec;
}

async function main(): Promise<number> {
  const kind = process.argv[2] ?? 'get-v1';
  const generated = process.argv[3];
  const seconds = Number(process.env.BENCH_SECONDS ?? 10);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
  const rows = Number(process.env.PROFILE_ROWS ?? 1000);
  installCleanup(20 * 60 * 1000);
  const pinning = detectPinning();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'doctype-profile-'));
  removeOnExit(tmp);
  const profDir = path.join(ROOT, 'bench', 'results', 'profiles');
  mkdirSync(profDir, { recursive: true });
  const dbKind = benchDbKind();
  const db =
    dbKind === 'mysql'
      ? await benchMysqlDatabase()
      : dbKind === 'postgres'
        ? await benchPostgresDatabase()
        : undefined;
  const stamp = `${kind}-${generated ? path.basename(generated) : 'core'}${db ? `-${dbKind}` : ''}-${Date.now()}`;
  const svc = await startService(pinning, {
    port: await freePort(),
    dbFile: path.join(tmp, 'p.sqlite'),
    databaseUrl: db?.url,
    generated,
    extraEnv: {
      FILES_PATH: path.join(tmp, 'files-site'),
      ...(process.env.PROFILE_SITE_CONFIG ? { SITE_CONFIG: process.env.PROFILE_SITE_CONFIG } : {}),
    },
    timeoutMs: 300000,
    label: 'service (profiled)',
    // One file per thread (tsx runs its module hooks on a worker thread): a folder per run, the busiest file is the main thread.
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${path.join(profDir, stamp)}`],
  });
  console.log(`${svc.readyLine}; ${Math.round(svc.readyMs)} ms from spawn`);
  if (kind === 'startup') {
    await stopChild(svc.child, 15000);
    console.log(report(path.join(profDir, stamp)));
    return 0;
  }
  const auth = await apiToken(svc.base);
  // PROFILE_SCRIPT: a Server Script (JSON fields) saved before the load, e.g. a Before Save script for `create`.
  if (process.env.PROFILE_SCRIPT) {
    const res = await fetch(`${svc.base}/api/resource/Server Script`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: process.env.PROFILE_SCRIPT,
    });
    if (res.status !== 201) throw new Error(`Server Script refused: ${res.status} ${await res.text()}`);
  }
  // PROFILE_WEBHOOK: a Webhook (JSON fields) saved before the load; PROFILE_RECEIVER_PORT: a receiver answering 204.
  const receiverPort = Number(process.env.PROFILE_RECEIVER_PORT ?? 0);
  const receiver = receiverPort
    ? http
        .createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()))
        .listen(receiverPort, '127.0.0.1')
    : undefined;
  if (process.env.PROFILE_WEBHOOK) {
    const res = await fetch(`${svc.base}/api/resource/Webhook`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: process.env.PROFILE_WEBHOOK,
    });
    if (res.status !== 201) throw new Error(`Webhook refused: ${res.status} ${await res.text()}`);
  }
  if (kind === 'bulk-insert' || kind === 'bulk-update') {
    const docs = Array.from({ length: rows }, (_, i) => ({ description: `profile bulk ${i}` }));
    let path_ = '/api/v2/document/ToDo/bulk_insert';
    let body: unknown = { docs };
    if (kind === 'bulk-update') {
      const inserted = await bulkJob(svc.base, auth, path_, body);
      path_ = '/api/v2/document/ToDo/bulk_update';
      body = { docs: (inserted.result.inserted as string[]).map((name) => ({ name, status: 'Closed' })) };
    }
    const job = await bulkJob(svc.base, auth, path_, body);
    const jobEnd = performance.now();
    console.log(
      `${kind}: ${rows} items in ${job.seconds.toFixed(2)} s, ${Math.round(rows / job.seconds)} docs/s (profiled)`,
    );
    await stopChild(svc.child, 15000);
    const stopped = performance.now();
    await db?.drop();
    const window = measuredWindow(jobEnd, stopped, job.seconds);
    console.log(
      `job window: ${Math.round(window.fromEndUs)} to ${Math.round(window.toEndUs)} us before the profile's end`,
    );
    console.log(report(path.join(profDir, stamp), window));
    return 0;
  }
  let s: ScenarioRequest;
  if (kind === 'file') {
    const url = await uploadBytes(svc.base, auth, new Uint8Array(10 * 1024).fill(65), 'profile-10k.txt');
    s = { url: `${svc.base}${url}`, headers: {} };
  } else {
    const names = await seedTodos(svc.base, auth, 0, rows);
    s = scenarioRequest(kind, svc.base, auth, names[Math.floor(rows / 2)] as string);
  }
  const loadStart = performance.now();
  const r = await runLoad(pinning, { ...s, connections, seconds, warmupSeconds: 1 }, kind);
  const loadEnd = performance.now();
  console.log(
    `${kind}: ${Math.round(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms (profiled: slower than unprofiled)`,
  );
  await stopChild(svc.child, 15000);
  const stopped = performance.now();
  receiver?.close();
  await db?.drop();
  void loadStart;
  console.log(report(path.join(profDir, stamp), measuredWindow(loadEnd, stopped, seconds)));
  return 0;
}

/** The main thread's profile among the per-thread files in `dir`: the one with the most busy samples. */
export function mainThreadProfile(dir: string): { file: string; profile: CpuProfile } {
  const profiles = readdirSync(dir).map((f) => {
    const file = path.join(dir, f);
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const idleIds = new Set(
      profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id),
    );
    return { file, profile, busy: profile.samples.filter((id) => !idleIds.has(id)).length };
  });
  const main = profiles.sort((a, b) => b.busy - a.busy)[0];
  if (!main) throw new Error(`no profile written in ${dir}`);
  return main;
}

/** Summary of the main thread's profile in `dir` (the busiest of the per-thread files); PROFILE_THREADS=1: every thread's. */
function report(dir: string, window?: { fromEndUs: number; toEndUs: number }): string {
  const main = mainThreadProfile(dir);
  const head = `${path.relative(ROOT, main.file)} (open in Chrome DevTools > Performance, or speedscope)\n\n${summarize(main.profile, 30, window)}`;
  if (process.env.PROFILE_THREADS !== '1') return head;
  const others = readdirSync(dir)
    .map((f) => path.join(dir, f))
    .filter((f) => f !== main.file)
    .map(
      (f) =>
        `\n\n=== ${path.relative(ROOT, f)}\n\n${summarize(JSON.parse(readFileSync(f, 'utf8')) as CpuProfile, 30, window)}`,
    );
  return head + others.join('');
}

if (require.main === module) {
  runMain(main);
}
