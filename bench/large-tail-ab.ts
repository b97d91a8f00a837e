// Experiment (not part of npm run bench): GET one's tail beside unindexed counts at 500,000 rows, with the reader threads'
// scheduling changed between phases of ONE server (so variants alternate in the same conditions). The reader threads are
// found as the server's tasks at nice +10 (what reader-pool.ts sets) after two counts started them; each phase sets their
// nice (renice) or SCHED_IDLE (chrt -i) first. Environment: TAIL_VARIANTS (comma list of n0, n10, n19, idle; default
// n10,n19,idle; none: no counts), TAIL_ROUNDS (default 3), TAIL_SECONDS (default 8), TAIL_DB (reuse a filled database
// file), TAIL_NODE_ARGS (the service's node flags), TAIL_SITE_CONFIG (JSON), BENCH_SHIELD (see bench/lib/procs.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { runLoad } from './lib/load';
import { detectPinning, freePort, shieldSelf, stopChild } from './lib/procs';
import { apiToken, startService } from './lib/service';

const ROWS = 500_000;
const VARIANTS = (process.env.TAIL_VARIANTS ?? 'n10,n19,idle').split(',');
const ROUNDS = Number(process.env.TAIL_ROUNDS ?? 3);
const SECONDS = Number(process.env.TAIL_SECONDS ?? 8);

function tasks(pid: number): { tid: number; nice: number; policy: number }[] {
  return readdirSync(`/proc/${pid}/task`).map((t) => {
    const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { tid: Number(t), nice: Number(f[16]), policy: Number(f[38]) };
  });
}

async function main(): Promise<void> {
  const shield = shieldSelf();
  const pinning = detectPinning();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-tail-ab-'));
  const dbFile = process.env.TAIL_DB ?? path.join(dir, 'site.sqlite');
  const siteConfig = path.join(dir, 'site_config.json');
  writeFileSync(siteConfig, JSON.stringify(JSON.parse(process.env.TAIL_SITE_CONFIG ?? '{}')));
  const fresh = !existsSync(dbFile);
  const svc = await startService(pinning, {
    port: await freePort(),
    dbFile,
    timeoutMs: 120_000,
    label: 'service (tail ab)',
    nodeArgs: (process.env.TAIL_NODE_ARGS ?? '').split(' ').filter(Boolean),
    extraEnv: { SITE_CONFIG: siteConfig },
  });
  try {
    const auth = { authorization: await apiToken(svc.base) };
    if (fresh) {
      const db = new BetterSqlite3(dbFile);
      db.pragma('busy_timeout = 10000');
      db.exec(`insert into "tabToDo" (name, creation, modified, owner, modified_by, docstatus, idx, status, priority, description)
        with recursive seq(n) as (select 1 union all select n + 1 from seq where n < ${ROWS})
        select printf('big-%07d', n), strftime('%Y-%m-%d %H:%M:%f000', '2025-01-01', '+' || n || ' seconds'),
               strftime('%Y-%m-%d %H:%M:%f000', '2025-01-01', '+' || n || ' seconds'), 'Administrator', 'Administrator',
               0, 0, case when n % 3 = 0 then 'Closed' else 'Open' end, 'Medium', 'row ' || n from seq`);
      db.close();
      process.stdout.write(`db ${dbFile}\n`);
    }
    const count = async () => {
      const filters = encodeURIComponent(JSON.stringify([['description', 'like', `%x${Math.random()}%`]]));
      const res = await fetch(`${svc.base}/api/v2/doctype/ToDo/count?filters=${filters}`, { headers: auth });
      if (!res.ok) throw new Error(`count ${res.status} ${await res.text()}`);
      await res.text();
    };
    await Promise.all([count(), count()]);
    const readers = tasks(svc.pid)
      .filter((t) => t.nice > 0)
      .map((t) => t.tid);
    process.stdout.write(`reader threads ${readers.join(' ')}\n`);
    const spec = {
      url: `${svc.base}/api/v2/document/ToDo/big-0250000`,
      headers: auth,
      connections: 50,
      seconds: SECONDS,
      warmupSeconds: 1,
      shield: shield?.nice,
    };
    for (let round = 0; round < ROUNDS; round++)
      for (const variant of round % 2 ? [...VARIANTS].reverse() : VARIANTS) {
        for (const tid of variant === 'none' ? [] : readers) {
          if (variant === 'idle') execFileSync('chrt', ['-i', '-p', '0', String(tid)]);
          else {
            execFileSync('chrt', ['-o', '-p', '0', String(tid)]);
            execFileSync('renice', ['-n', variant.slice(1), '-p', String(tid)], { stdio: 'ignore' });
          }
        }
        const state = tasks(svc.pid)
          .filter((t) => readers.includes(t.tid))
          .map((t) => `${t.nice}/${t.policy}`)
          .join(' ');
        let stop = false;
        let n = 0;
        const counting = Promise.all(
          (variant === 'none' ? [] : [0, 1]).map(async () => {
            while (!stop) {
              await count();
              n++;
            }
          }),
        );
        const m = await runLoad(pinning, spec, `tail ${variant}`, svc.pid);
        stop = true;
        await counting;
        process.stdout.write(
          `round ${round} ${variant.padEnd(4)} [${state}] load ${m.loadavg.toFixed(1)}: ${Math.round(m.rps)} req/s ` +
            `p99 ${m.p99} steady max ${m.steadyMax} raw max ${m.max} first ${m.firstMax} counts ${n}\n`,
        );
      }
  } finally {
    shield?.restore();
    await stopChild(svc.child);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
