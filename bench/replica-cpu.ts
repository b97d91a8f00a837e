// Read replicas (issue #32): what a list-heavy load costs the primary with one replica answering it, against the same
// load without read_replicas. A private MariaDB primary (binary log) and replica (GTID) on their own ports, or with
// BENCH_DB=postgres a private PostgreSQL primary and streaming standby (pg_basebackup -R); the site's
// ToDo table seeded with ROWS rows; `svc serve` started for each run with site config read_replicas [] (A) or
// [replica] (B), result_cache_entries 0 in both (every list is a query, not a remembered page); the same list page of
// 20 (filter, sort) at CONNECTIONS connections for SECONDS. The primary's and the replica's CPU time (/proc/PID/stat of
// mariadbd, or of the postmaster and all its children on PostgreSQL) over each run, per request. Runs A, B, B, A (both orders); the line: primary CPU per request B/A
// (issue's bound: <= 0.20).
//   npx tsx bench/replica-cpu.ts                      (BENCH_DB=postgres: PostgreSQL)
//   PRIMARY_PORT=4825 REPLICA_PORT=4826 ROWS=2000 BENCH_SECONDS=10 CONNECTIONS=16 npx tsx bench/replica-cpu.ts
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { regenerateKeys } from '../runtime/auth/api-keys';
import { closeSite, openSite } from '../runtime/bootstrap';
import { DEFAULT_SITE_CONFIG } from '../runtime/config/config';
import { registry } from '../generated';
import {
  HAVE_MARIADB,
  HAVE_POSTGRES,
  MariaDBReplication,
  PostgresReplication,
} from '../test/helpers/private-replicas';
import { runLoad } from './lib/load';
import {
  cpuMs,
  detectPinning,
  freePort,
  pinned,
  removeOnExit,
  runAtExit,
  runMain,
  startServer,
  stopChild,
} from './lib/procs';

const ROOT = path.resolve(__dirname, '..');
const PRIMARY_PORT = Number(process.env.PRIMARY_PORT ?? 4825);
const REPLICA_PORT = Number(process.env.REPLICA_PORT ?? 4826);
const ROWS = Number(process.env.ROWS ?? 2000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 16);
const DATABASE = 'replicas_bench';
const TMP = path.join(ROOT, 'bench/tmp', `replica-cpu-${process.pid}`);

type Side = 'A' | 'B';

/** The replicated pair under test, whatever the database. */
interface Pair {
  /** The server program, for the report. */
  program: string;
  start(database: string): Promise<void>;
  caughtUp(): Promise<void>;
  destroy(): Promise<void>;
  primaryUrl(database: string): string;
  replicaUrl(database: string): string;
  /** The processes whose CPU counts for each server. */
  primaryPids(): number[];
  replicaPids(): number[];
}

function mariadbPair(): Pair {
  const pair = new MariaDBReplication(PRIMARY_PORT, REPLICA_PORT, TMP);
  return {
    program: 'mariadbd',
    start: (database) => pair.start(database),
    caughtUp: () => pair.caughtUp(),
    destroy: () => pair.destroy(),
    primaryUrl: (database) => pair.primary.url(database),
    replicaUrl: (database) => pair.replica.url(database),
    primaryPids: () => (pair.primary.pid ? [pair.primary.pid] : []),
    replicaPids: () => (pair.replica.pid ? [pair.replica.pid] : []),
  };
}

function postgresPair(): Pair {
  const pair = new PostgresReplication(PRIMARY_PORT, REPLICA_PORT, TMP);
  return {
    program: 'postgres',
    start: (database) => pair.start(database),
    caughtUp: () => pair.caughtUp(),
    destroy: () => pair.destroy(),
    primaryUrl: (database) => pair.url(pair.primary, database),
    replicaUrl: (database) => pair.url(pair.standby, database),
    primaryPids: () => pair.primary.processes(),
    replicaPids: () => pair.standby.processes(),
  };
}

/** CPU time (ms) of each of `pids` now. */
function cpuOf(pids: readonly number[]): Map<number, number> {
  const times = new Map<number, number>();
  for (const pid of pids) {
    const ms = cpuMs(pid);
    if (ms !== undefined) times.set(pid, ms);
  }
  return times;
}

/** CPU time spent since `before` by the processes now in `pids` (one started meanwhile counts from 0). */
function cpuSince(before: Map<number, number>, pids: readonly number[]): number {
  let total = 0;
  for (const [pid, ms] of cpuOf(pids)) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** The figures of one run. */
interface Run {
  side: Side;
  requests: number;
  rps: number;
  primaryUs: number;
  replicaUs: number;
  loadavg: number;
}

/** Migrates the site, seeds ToDo rows and makes Administrator's API keys; returns the Authorization value. */
async function prepare(url: string): Promise<string> {
  const site = await openSite(
    {
      port: 0,
      host: '127.0.0.1',
      databaseUrl: url,
      adminPassword: 'bench-admin-pw',
      adminPasswordDefaulted: false,
      site: { ...DEFAULT_SITE_CONFIG, job_worker: false },
    },
    registry,
  );
  try {
    const now = new Date().toISOString().slice(0, 19).replace('T', ' ');
    const statuses = ['Open', 'Closed', 'Cancelled'];
    for (let start = 0; start < ROWS; start += 500) {
      const rows = [];
      for (let i = start; i < Math.min(ROWS, start + 500); i++)
        rows.push({
          name: `bench-${String(i).padStart(6, '0')}`,
          owner: 'Administrator',
          modified_by: 'Administrator',
          creation: now,
          modified: now,
          docstatus: 0,
          idx: 0,
          status: statuses[i % 3],
          priority: 'Medium',
          description: `replica bench row ${i}`,
        });
      await site.db.knex('tabToDo').insert(rows);
    }
    const keys = await regenerateKeys(site.db.knex, 'Administrator');
    if (!keys) throw new Error('Administrator missing');
    return `token ${keys.api_key}:${keys.api_secret}`;
  } finally {
    await closeSite(site);
  }
}

async function measure(side: Side, pair: Pair, auth: string): Promise<Run> {
  const config = path.join(TMP, `site-${side}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      job_worker: false,
      result_cache_entries: 0,
      read_replicas: side === 'B' ? [pair.replicaUrl(DATABASE)] : [],
    }),
  );
  const pinning = detectPinning();
  const port = await freePort();
  const [cmd, args] = pinned(pinning, pinning.serverCore, process.execPath, [
    '--import',
    'tsx',
    path.join(ROOT, 'runtime/cli/main.ts'),
    'serve',
  ]);
  const server = await startServer(cmd, args, {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: pair.primaryUrl(DATABASE),
      SITE_CONFIG: config,
      LOG_LEVEL: 'warn',
    },
    ready: /^serving \d+ DocTypes on /,
    timeoutMs: 300_000,
    label: `serve (${side})`,
  });
  try {
    const query = new URLSearchParams({
      fields: JSON.stringify(['name', 'description', 'status', 'priority', 'modified']),
      filters: JSON.stringify([['status', '=', 'Open']]),
      order_by: 'description desc',
      limit_page_length: '20',
    });
    const spec = {
      url: `http://127.0.0.1:${port}/api/resource/ToDo?${query}`,
      headers: { Authorization: auth },
      connections: CONNECTIONS,
      warmupSeconds: 0,
    };
    await runLoad(pinning, { ...spec, seconds: 3 }, `warm-up ${side}`);
    const before = { primary: cpuOf(pair.primaryPids()), replica: cpuOf(pair.replicaPids()) };
    const result = await runLoad(pinning, { ...spec, seconds: SECONDS }, `list ${side}`);
    const primaryMs = cpuSince(before.primary, pair.primaryPids());
    const replicaMs = cpuSince(before.replica, pair.replicaPids());
    return {
      side,
      requests: result.total,
      rps: result.rps,
      primaryUs: (primaryMs * 1000) / result.total,
      replicaUs: (replicaMs * 1000) / result.total,
      loadavg: result.loadavg,
    };
  } finally {
    await stopChild(server.child);
  }
}

runMain(async () => {
  const postgres = process.env.BENCH_DB === 'postgres';
  if (postgres ? !HAVE_POSTGRES : !HAVE_MARIADB) {
    console.log(
      `replica-cpu: skipped, no ${postgres ? 'PostgreSQL binaries' : 'mariadbd / mariadb-install-db'} here`,
    );
    return 0;
  }
  mkdirSync(TMP, { recursive: true });
  removeOnExit(TMP);
  const pair = postgres ? postgresPair() : mariadbPair();
  // A bench that dies leaves no server behind.
  const stopPair = runAtExit(() => {
    for (const pid of [...pair.primaryPids(), ...pair.replicaPids()])
      if (pid)
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
  });
  try {
    await pair.start(DATABASE);
    const auth = await prepare(pair.primaryUrl(DATABASE));
    await pair.caughtUp();
    const runs: Run[] = [];
    for (const side of ['A', 'B', 'B', 'A'] as Side[]) {
      const run = await measure(side, pair, auth);
      runs.push(run);
      console.log(
        `  ${side} (${side === 'A' ? 'no replica' : 'one replica'}): ${run.requests} lists, ${Math.round(run.rps)} req/s, primary ${pair.program} ${run.primaryUs.toFixed(0)} us/req, replica ${pair.program} ${run.replicaUs.toFixed(0)} us/req (load ${run.loadavg.toFixed(1)})`,
      );
    }
    const mean = (side: Side, pick: (r: Run) => number) => {
      const of = runs.filter((r) => r.side === side).map(pick);
      return of.reduce((a, b) => a + b, 0) / of.length;
    };
    const ratio = mean('B', (r) => r.primaryUs) / mean('A', (r) => r.primaryUs);
    const orders = [runs[1]!.primaryUs / runs[0]!.primaryUs, runs[2]!.primaryUs / runs[3]!.primaryUs];
    console.log(
      `list 20 (${ROWS} rows, ${CONNECTIONS} connections), primary CPU per request with one replica / without: ${ratio.toFixed(3)} (A then B ${orders[0]!.toFixed(3)}, B then A ${orders[1]!.toFixed(3)}; bound <= 0.20) ${ratio <= 0.2 ? 'ok' : 'OVER'}; load average ${os.loadavg()[0]!.toFixed(1)}`,
    );
    return ratio <= 0.2 ? 0 : 1;
  } finally {
    stopPair();
    await pair.destroy();
  }
});
