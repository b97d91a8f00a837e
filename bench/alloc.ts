// Bytes allocated and GC pause per request of a scenario, on SQLite and (BENCH_DB=mysql) on MariaDB side by side:
// `npx tsx bench/alloc.ts [get-v1|get-v2|list-v1|list-v2|count|create]`. The server runs with `--trace-gc-nvp`
// (pinned as in `npm run bench`); after a warm-up load, the `allocated=` (bytes since the previous GC) and `pause=`
// of the GCs during a second load are summed and divided by its requests. GC is part of a request's cost: this shows
// how much each side makes the collector work, which a CPU profile spreads over "(garbage collector)" alone.
// Environment: BENCH_SECONDS (default 6), BENCH_CONNECTIONS (default 50).
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runLoad } from './lib/load';
import { detectPinning, freePort, installCleanup, removeOnExit, runMain, stopChild } from './lib/procs';
import { apiToken, benchDbKind, benchMysqlDatabase, seedTodos, startService } from './lib/service';
import { scenarioRequest } from './profile';

async function main(): Promise<number> {
  const kind = process.argv[2] ?? 'list-v1';
  const seconds = Number(process.env.BENCH_SECONDS ?? 6);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
  installCleanup(20 * 60 * 1000);
  const pinning = detectPinning();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'doctype-alloc-'));
  removeOnExit(tmp);

  const measure = async (db: 'sqlite' | 'mysql') => {
    const mysqlDb = db === 'mysql' ? await benchMysqlDatabase() : undefined;
    const svc = await startService(pinning, {
      port: await freePort(),
      dbFile: path.join(tmp, `${kind}.sqlite`),
      databaseUrl: mysqlDb?.url,
      timeoutMs: 300000,
      label: `service (alloc, ${db})`,
      nodeArgs: ['--trace-gc-nvp'],
    });
    let counting = false;
    let allocated = 0;
    let pauseMs = 0;
    let scavenges = 0;
    let fullGcs = 0;
    let pending = '';
    svc.child.stdout?.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      if (!counting) return;
      for (const line of lines) {
        const pause = / pause=([\d.]+)/.exec(line);
        if (!pause) continue;
        pauseMs += Number(pause[1]);
        // A scavenge's `allocated` is what new space took since the previous GC (a mark-compact's is not comparable).
        if (/ gc=s /.test(line)) {
          allocated += Number(/ allocated=(\d+)/.exec(line)?.[1] ?? 0);
          scavenges++;
        } else fullGcs++;
      }
    });
    try {
      const auth = await apiToken(svc.base);
      const names = await seedTodos(svc.base, auth, 0, 100);
      const req = scenarioRequest(kind, svc.base, auth, names[50] as string);
      const spec = { ...req, connections, seconds, warmupSeconds: 0 };
      await runLoad(pinning, { ...spec, seconds: 2 }, `${kind} warm-up (${db})`, svc.pid);
      counting = true;
      const r = await runLoad(pinning, spec, `${kind} (${db})`, svc.pid);
      counting = false;
      console.log(
        `${kind} on ${db}: ${Math.round(r.rps)} req/s, server CPU ${r.cpuUsPerReq?.toFixed(1) ?? '?'} us/req, ` +
          `${(allocated / r.total / 1024).toFixed(2)} KB allocated/req, ${((pauseMs * 1000) / r.total).toFixed(2)} us GC pause/req ` +
          `(${scavenges} scavenges, ${fullGcs} other GCs)`,
      );
    } finally {
      await stopChild(svc.child, 15000);
      await mysqlDb?.drop();
    }
  };
  await measure('sqlite');
  if (benchDbKind() === 'mysql') await measure('mysql');
  return 0;
}

runMain(main);
