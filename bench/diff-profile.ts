// Where a scenario's server CPU goes beyond the Koa hello-world baseline's, per request:
// `npx tsx bench/diff-profile.ts [get-v1|get-v2|create|list-v1|list-v2|count|method] [GENERATED_DIR]`
// Profiles the baseline and the service (`node --cpu-prof`, pinned as in `npm run bench`) under the same load, one
// after the other, and prints each function's self time per request in both with the difference, largest first.
// Functions the baseline runs too (Koa, node:http) show what the service adds to them; the rest is the service's own.
// PROFILE_SCRIPT (JSON fields): a Server Script saved before the load (the `script` scenario, see profile.ts).
// Environment: BENCH_SECONDS (default 8), BENCH_CONNECTIONS (default 50), DIFF_TOP (rows, default 50).
// BENCH_DB=mysql: the service runs on a fresh MariaDB database (bench_<pid>_<n> on BENCH_MYSQL_URL's server, dropped
// after). DIFF_BASE_SCRIPT=0 (with DIFF_BASE=sqlite and PROFILE_SCRIPT): the script is saved on the service side
// only, so the table is what the script costs per request. PROFILE_SETTINGS (JSON fields, e.g.
// '{"log_api_requests":1}'): System Settings saved before the load; with DIFF_BASE=sqlite and DIFF_BASE_SETTINGS=0 on
// the service side only (what the request log costs per request). DIFF_BASE=sqlite: the side compared against is the
// same scenario on SQLite instead of the Koa hello-world, so with BENCH_DB=mysql the table is what MariaDB costs per request beyond SQLite, function by function.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setSystemSettings } from './lib/bench-users';
import { runLoad } from './lib/load';
import {
  detectPinning,
  freePort,
  installCleanup,
  pinned,
  removeOnExit,
  runMain,
  startServer,
  stopChild,
} from './lib/procs';
import {
  apiToken,
  benchDbKind,
  benchMysqlDatabase,
  benchPostgresDatabase,
  seedTodos,
  startService,
} from './lib/service';
import {
  mainThreadProfile,
  measuredWindow,
  scenarioRequest,
  type ScenarioRequest,
  selfTimeByFunction,
} from './profile';

async function main(): Promise<number> {
  const kind = process.argv[2] ?? 'method';
  const generated = process.argv[3] ?? (kind === 'method' ? 'bench/tmp/feature-gen' : undefined);
  const seconds = Number(process.env.BENCH_SECONDS ?? 8);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
  const top = Number(process.env.DIFF_TOP ?? 50);
  installCleanup(20 * 60 * 1000);
  const pinning = detectPinning();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'doctype-diff-profile-'));
  removeOnExit(tmp);

  /** Runs the load against a profiled server and returns its self time per request by function (us). */
  const profiled = async (
    label: string,
    dir: string,
    start: () => Promise<{ child: ChildProcess } & Partial<ScenarioRequest> & { url: string }>,
  ) => {
    const server = await start();
    const r = await runLoad(
      pinning,
      {
        url: server.url,
        headers: server.headers,
        method: server.method,
        body: server.body,
        connections,
        seconds,
        warmupSeconds: 1,
      },
      label,
      server.child.pid,
    );
    const loadEnd = performance.now();
    await stopChild(server.child, 15000);
    const fn = selfTimeByFunction(
      mainThreadProfile(dir).profile,
      measuredWindow(loadEnd, performance.now(), seconds),
    );
    for (const [key, us] of fn) fn.set(key, us / r.total);
    // The profile counts a sample in a system call while the process waits off the core (another process woken by its
    // write, e.g. MariaDB, ran first): its busy time can exceed the process's CPU time, measured here from /proc.
    console.log(
      `${label}: ${Math.round(r.rps)} req/s (profiled), server CPU ${r.cpuUsPerReq?.toFixed(0) ?? '?'} us per request`,
    );
    return fn;
  };

  /** The service on SQLite, or on a fresh MariaDB or PostgreSQL database (dropped when the server has stopped). */
  const profiledService = async (
    label: string,
    dir: string,
    db: 'sqlite' | 'mysql' | 'postgres',
    script = true,
    settings = true,
  ) => {
    const mysqlDb =
      db === 'mysql'
        ? await benchMysqlDatabase()
        : db === 'postgres'
          ? await benchPostgresDatabase()
          : undefined;
    try {
      return await profiled(label, dir, async () => {
        const svc = await startService(pinning, {
          port: await freePort(),
          dbFile: path.join(tmp, `${label}.sqlite`),
          databaseUrl: mysqlDb?.url,
          generated,
          timeoutMs: 300000,
          label: `service (profiled, ${db})`,
          nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
        });
        const auth = await apiToken(svc.base);
        // PROFILE_SCRIPT: a Server Script (JSON fields) saved first, as in profile.ts (the `script` scenario).
        if (process.env.PROFILE_SCRIPT && script) {
          const res = await fetch(`${svc.base}/api/resource/Server Script`, {
            method: 'POST',
            headers: { authorization: auth, 'content-type': 'application/json' },
            body: process.env.PROFILE_SCRIPT,
          });
          if (res.status !== 201) throw new Error(`Server Script refused: ${res.status} ${await res.text()}`);
        }
        if (process.env.PROFILE_SETTINGS && settings)
          await setSystemSettings(
            svc.base,
            auth,
            JSON.parse(process.env.PROFILE_SETTINGS) as Record<string, unknown>,
          );
        const names = await seedTodos(svc.base, auth, 0, 100);
        return { child: svc.child, ...scenarioRequest(kind, svc.base, auth, names[50] as string) };
      });
    } finally {
      await mysqlDb?.drop();
    }
  };

  const db = benchDbKind();
  const againstSqlite = process.env.DIFF_BASE === 'sqlite';
  const helloDir = path.join(tmp, 'hello');
  mkdirSync(helloDir);
  const hello = againstSqlite
    ? await profiledService(
        `${kind} (sqlite)`,
        helloDir,
        'sqlite',
        process.env.DIFF_BASE_SCRIPT !== '0',
        process.env.DIFF_BASE_SETTINGS !== '0',
      )
    : await profiled('baseline', helloDir, async () => {
        const port = await freePort();
        const [cmd, args] = pinned(pinning, pinning.serverCore, process.execPath, [
          '--cpu-prof',
          `--cpu-prof-dir=${helloDir}`,
          '--import',
          'tsx',
          path.join(__dirname, 'hello-server.ts'),
        ]);
        const started = await startServer(cmd, args, {
          env: { ...process.env, PORT: String(port), HOST: '127.0.0.1' },
          ready: /^hello listening/,
          timeoutMs: 30000,
          label: 'hello server',
        });
        return { child: started.child, url: `http://127.0.0.1:${port}/` };
      });
  const serviceDir = path.join(tmp, 'service');
  mkdirSync(serviceDir);
  const service = await profiledService(`${kind} (${db})`, serviceDir, db);

  const busy = (fn: Map<string, number>) =>
    [...fn].filter(([key]) => !key.startsWith('(idle)')).reduce((sum, [, us]) => sum + us, 0);
  console.log(
    `\nbusy CPU per request (profiled): ${againstSqlite ? `${kind} on sqlite` : 'baseline'} ${busy(hello).toFixed(2)} us, ` +
      `${kind} on ${db} ${busy(service).toFixed(2)} us\n`,
  );
  const rows = [...new Set([...hello.keys(), ...service.keys()])]
    .filter((key) => !key.startsWith('(idle)'))
    .map((key) => ({ key, base: hello.get(key) ?? 0, svc: service.get(key) ?? 0 }))
    .sort((a, b) => Math.abs(b.svc - b.base) - Math.abs(a.svc - a.base))
    .slice(0, top);
  console.log(
    `  diff us  ${(againstSqlite ? 'sqlite' : 'baseline').padStart(9)}  ${db.padStart(9)}  function`,
  );
  for (const { key, base, svc } of rows) {
    console.log(
      `${(svc - base).toFixed(2).padStart(8)}  ${base.toFixed(2).padStart(9)}  ${svc.toFixed(2).padStart(9)}  ${key}`,
    );
  }
  return 0;
}

runMain(main);
