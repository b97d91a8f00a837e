// The 500,000-row SQLite scenario of `npm run bench` (alone: npx tsx bench/large-sqlite.ts): GET one ToDo's latency
// (p99, max) idle and while clients run unindexed counts beside it (target: max < 25 ms), once with reader_threads 0
// (every read on the event loop, as before reader threads) and once with the default; and a deep page by cursor against
// the first page (target: within 2x), with start=200000 for comparison. Max latency is reported twice: autocannon's raw
// max, and the steady max without each connection's first response (autocannon's clock for that one starts before the
// TCP connect and the other 49 clients' setup, so it measures the connection burst of a fresh run: a warm-up). Pages are walked (each request distinct), so
// no remembered result answers them. GET one is loaded by autocannon (50 connections) pinned to its own core, as the
// other lines of `npm run bench`; the count clients and the page walks are fetch calls from this process.
// The service runs with node --single-threaded-gc when it is pinned to one core: V8's default GC helper threads (4) would
// share that core with the event loop, and the event loop waits behind them at every scavenge (docs/performance.md).
// Environment: BENCH_LARGE_ROWS (default 500000), BENCH_LARGE_SECONDS (per load phase, default 8), BENCH_LARGE_NODE_ARGS
// (the service's node flags instead, space-separated; empty for V8's defaults), BENCH_SHIELD (bench/lib/procs.ts
// shieldSelf: on a shared machine, as root, the service and load generator at a lower nice than other sessions).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { runLoad, type Measured } from './lib/load';
import { detectPinning, freePort, type Pinning, shieldSelf, stopChild } from './lib/procs';
import { apiToken, startService } from './lib/service';

const ROWS = Number(process.env.BENCH_LARGE_ROWS ?? 500_000);
const SECONDS = Number(process.env.BENCH_LARGE_SECONDS ?? 8);
const COUNT_CLIENTS = 2;
const PAGES = 200;

/** The service's node flags: BENCH_LARGE_NODE_ARGS, else --single-threaded-gc when pinned to one core. */
function nodeArgs(pinning: Pinning): string[] {
  const raw = process.env.BENCH_LARGE_NODE_ARGS;
  if (raw !== undefined) return raw.split(' ').filter(Boolean);
  return pinning.enabled ? ['--single-threaded-gc'] : [];
}

/** The figures of the large scenario. */
export interface LargeResult {
  rows: number;
  idle: Measured;
  /** GET one beside the counts, with reader_threads 0 (before) and with the default (after). */
  busyWithoutThreads: Measured;
  busy: Measured;
  countsWithoutThreads: { n: number; meanMs: number };
  counts: { n: number; meanMs: number };
  firstPageMs: number;
  deepPageMs: number;
  offsetPageMs: number;
  loadavg: number[];
  /** The service's node flags. */
  nodeArgs: string[];
  /** BENCH_SHIELD's nice, when the run was shielded from other sessions. */
  shield?: number;
}

const median = (x: number[]) => [...x].sort((a, b) => a - b)[Math.floor(x.length / 2)] ?? 0;
const mean = (x: number[]) => x.reduce((a, b) => a + b, 0) / Math.max(1, x.length);

/** Makes a SQLite site with `rows` ToDos (modified one second apart) and starts the service on it. */
async function serve(dir: string, tag: string, readerThreads: number | undefined) {
  const dbFile = path.join(dir, 'site.sqlite');
  const siteConfig = path.join(dir, `site_config_${tag}.json`);
  writeFileSync(
    siteConfig,
    JSON.stringify(readerThreads === undefined ? {} : { reader_threads: readerThreads }),
  );
  const svc = await startService(detectPinning(), {
    port: await freePort(),
    dbFile,
    timeoutMs: 120_000,
    label: `service (large, ${tag})`,
    extraEnv: { SITE_CONFIG: siteConfig },
    nodeArgs: nodeArgs(detectPinning()),
  });
  return { svc, dbFile };
}

async function fill(dbFile: string, rows: number): Promise<void> {
  const db = new BetterSqlite3(dbFile);
  db.pragma('busy_timeout = 10000');
  const have = db.prepare('select count(*) from "tabToDo"').pluck().get() as number;
  if (have < rows)
    db.exec(`insert into "tabToDo" (name, creation, modified, owner, modified_by, docstatus, idx, status, priority, description)
      with recursive seq(n) as (select 1 union all select n + 1 from seq where n < ${rows})
      select printf('big-%07d', n), strftime('%Y-%m-%d %H:%M:%f000', '2025-01-01', '+' || n || ' seconds'),
             strftime('%Y-%m-%d %H:%M:%f000', '2025-01-01', '+' || n || ' seconds'), 'Administrator', 'Administrator',
             0, 0, case when n % 3 = 0 then 'Closed' else 'Open' end, 'Medium', 'row ' || n from seq`);
  db.close();
}

/** Runs the scenario; `log` gets a line per phase. */
export async function runLargeSqlite(log: (line: string) => void): Promise<LargeResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-large-'));
  const pinning = detectPinning();
  const shield = shieldSelf();
  try {
    const phase = async (tag: string, readerThreads: number | undefined) => {
      const { svc, dbFile } = await serve(dir, tag, readerThreads);
      try {
        const auth = { authorization: await apiToken(svc.base) };
        if (tag === 'before') {
          log(`inserting ${ROWS} ToDo rows ...`);
          await fill(dbFile, ROWS);
        }
        const ok = async (url: string) => {
          const res = await fetch(`${svc.base}${url}`, { headers: auth });
          if (!res.ok) throw new Error(`${url}: ${res.status} ${(await res.text()).slice(0, 300)}`);
          return res.json() as Promise<{ data: unknown; next_cursor?: string | null }>;
        };
        const getSpec = {
          url: `${svc.base}/api/v2/document/ToDo/big-0250000`,
          headers: auth,
          connections: 50,
          seconds: SECONDS,
          warmupSeconds: 1,
          shield: shield?.nice,
        };
        const idle = await runLoad(pinning, getSpec, `GET one idle (${tag})`, svc.pid);
        const times: number[] = [];
        let stop = false;
        const counting = Promise.all(
          Array.from({ length: COUNT_CLIENTS }, async () => {
            while (!stop) {
              const t0 = performance.now();
              const filters = encodeURIComponent(
                JSON.stringify([['description', 'like', `%x${Math.random()}%`]]),
              );
              await ok(`/api/v2/doctype/ToDo/count?filters=${filters}`);
              times.push(performance.now() - t0);
            }
          }),
        );
        const busy = await runLoad(pinning, getSpec, `GET one beside counts (${tag})`, svc.pid);
        stop = true;
        await counting;
        const counts = { n: times.length, meanMs: mean(times) };
        log(
          `[${tag}] GET one idle: ${Math.round(idle.rps)} req/s, p99 ${idle.p99} ms, max ${idle.steadyMax} ms ` +
            `(raw ${idle.max} ms, first response per connection ${idle.firstMax} ms); ` +
            `beside ${COUNT_CLIENTS} clients looping unindexed counts (${counts.n} counts, ${counts.meanMs.toFixed(0)} ms each): ` +
            `${Math.round(busy.rps)} req/s, p99 ${busy.p99} ms, max ${busy.steadyMax} ms ` +
            `(raw ${busy.max} ms, first response per connection ${busy.firstMax} ms)`,
        );
        return { idle, busy, counts, ok };
      } catch (err) {
        await stopChild(svc.child);
        throw err;
      } finally {
        if (tag === 'before') await stopChild(svc.child);
        else (phase as { svc?: typeof svc }).svc = svc;
      }
    };
    const before = await phase('before', 0);
    const after = await phase('after', undefined);
    const svc = (phase as { svc?: { child: import('node:child_process').ChildProcess } }).svc;
    try {
      const walk = async (cursor: string | null, pages: number) => {
        const times: number[] = [];
        for (let i = 0; i < pages && cursor !== null; i++) {
          const t0 = performance.now();
          const body = await after.ok(`/api/v2/document/ToDo?limit=20&cursor=${encodeURIComponent(cursor)}`);
          times.push(performance.now() - t0);
          cursor = body.next_cursor ?? null;
        }
        return times;
      };
      const first = await after.ok('/api/v2/document/ToDo?limit=20&cursor=');
      const shape = JSON.parse(Buffer.from(first.next_cursor as string, 'base64url').toString())[0] as string;
      // Page 10,000 of 20 in the default order (modified desc): it starts after the 200,000th newest row.
      const reader = new BetterSqlite3(path.join(dir, 'site.sqlite'), { readonly: true });
      const row = reader
        .prepare(
          'select modified, name from "tabToDo" order by modified desc, name asc limit 1 offset 199999',
        )
        .get() as { modified: string; name: string };
      reader.close();
      const deep = Buffer.from(JSON.stringify([shape, row.modified, row.name])).toString('base64url');
      const firstPages = await walk('', PAGES);
      const deepPages = await walk(deep, PAGES);
      const offsets: number[] = [];
      for (let i = 0; i < 40; i++) {
        const t0 = performance.now();
        await after.ok(`/api/v2/document/ToDo?limit=20&start=${200_000 + i * 20}`);
        offsets.push(performance.now() - t0);
      }
      const result: LargeResult = {
        rows: ROWS,
        idle: after.idle,
        busyWithoutThreads: before.busy,
        busy: after.busy,
        countsWithoutThreads: before.counts,
        counts: after.counts,
        firstPageMs: median(firstPages),
        deepPageMs: median(deepPages),
        offsetPageMs: median(offsets),
        loadavg: os.loadavg(),
        nodeArgs: nodeArgs(pinning),
        shield: shield?.nice,
      };
      log(
        `list 20 by cursor, ${PAGES} pages walked from page 1: median ${result.firstPageMs.toFixed(2)} ms; from page ` +
          `10,000: ${result.deepPageMs.toFixed(2)} ms (${(result.deepPageMs / result.firstPageMs).toFixed(2)}x); ` +
          `start=200000: ${result.offsetPageMs.toFixed(1)} ms`,
      );
      return result;
    } finally {
      if (svc) await stopChild(svc.child);
    }
  } finally {
    shield?.restore();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  runLargeSqlite((line) => process.stdout.write(`${line}\n`)).then(
    (r) => {
      process.stdout.write(
        `GET one max beside counts (steady; raw in brackets): ${r.busyWithoutThreads.steadyMax} (${r.busyWithoutThreads.max}) ms with reader_threads 0, ` +
          `${r.busy.steadyMax} (${r.busy.max}) ms with reader threads (target < 25 ms); ` +
          `deep cursor page ${(r.deepPageMs / r.firstPageMs).toFixed(2)}x the first (target <= 2x). ` +
          `Service flags: ${r.nodeArgs.join(' ') || 'none'}${r.shield === undefined ? '' : `; shielded (autogroup nice ${r.shield})`}. ` +
          `The machine is shared and loaded: load average ${r.loadavg.map((l) => l.toFixed(1)).join(' ')}\n`,
      );
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
