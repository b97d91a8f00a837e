// An index added to a ROWS-row (default 500,000) MariaDB table while GETs and creates run (issue #31: no request waits
// more than 100 ms, nothing fails). `svc serve` (the repo's generated DocTypes) on a database of its own on
// BENCH_MYSQL_URL's server; tabToDo seeded with ROWS rows by multi-row INSERTs. Then, in ROUNDS rounds: the load alone
// for as long as the last build took (the baseline), and the load while this process migrates ToDo with search_index
// on reference_name (the migration's `ALTER TABLE … ADD INDEX …, ALGORITHM=INPLACE, LOCK=NONE`), then drops the index
// again (the migration back). The load: CONCURRENCY clients, each a GET of a random seeded ToDo then a create, in turn.
//   BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/ npx tsx bench/migrate-online-index.ts
//   BENCH_DB_NAME=mig2_online ROWS=500000 ROUNDS=2 CONCURRENCY=8 PORT=4830 …   (database name, default bench_<pid>)
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import knexFactory from 'knex';
import { DEFAULT_TIMEOUTS } from '../runtime/db/backend';
import { connect } from '../runtime/db/connect';
import { migrate } from '../runtime/db/migrate';
import type { DocTypeMeta } from '../runtime/meta/types';
import type { Registry } from '../runtime/registry/registry';
import { detectPinning, freePort, pinned, runMain, startServer, stopChild } from './lib/procs';
import { ADMIN_PASSWORD, apiToken, BENCH_MYSQL_URL } from './lib/service';

const ROOT = path.resolve(__dirname, '..');
const ROWS = Number(process.env.ROWS ?? 500_000);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const NAME = process.env.BENCH_DB_NAME ?? `bench_${process.pid}`;
const INDEXED = 'reference_name';

/** The latencies (ms) and failures of the requests that ran while a load ran. */
interface LoadResult {
  latencies: number[];
  /** The slowest GET and the slowest create (ms). */
  maxGet: number;
  maxCreate: number;
  failures: number;
  firstFailure?: string;
}

/** Runs the load until `until` settles; the requests still in flight then are waited for and counted. */
async function load(
  base: string,
  auth: string,
  names: string[],
  until: Promise<unknown>,
): Promise<LoadResult> {
  const result: LoadResult = { latencies: [], maxGet: 0, maxCreate: 0, failures: 0 };
  let stop = false;
  void until.finally(() => (stop = true));
  const timed = async (url: string, init?: RequestInit) => {
    const started = performance.now();
    try {
      const res = await fetch(url, init);
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${res.status}`);
    } catch (err) {
      result.failures++;
      result.firstFailure ??= String(err);
    }
    const ms = performance.now() - started;
    result.latencies.push(ms);
    if (init?.method === 'POST') result.maxCreate = Math.max(result.maxCreate, ms);
    else result.maxGet = Math.max(result.maxGet, ms);
  };
  let i = 0;
  const client = async () => {
    while (!stop) {
      const name = names[Math.floor(Math.random() * names.length)]!;
      await timed(`${base}/api/resource/ToDo/${name}`, { headers: { authorization: auth } });
      await timed(`${base}/api/resource/ToDo`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ description: `online index bench ${i++}` }),
      });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
  return result;
}

function summary(label: string, r: LoadResult, ms: number): string {
  const sorted = [...r.latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return `${label}: ${sorted.length} requests in ${Math.round(ms)} ms, ${r.failures} failed${r.firstFailure ? ` (${r.firstFailure})` : ''}, p50 ${at(0.5).toFixed(1)} ms, p99 ${at(0.99).toFixed(1)} ms, max ${(sorted.at(-1) ?? NaN).toFixed(1)} ms (GET ${r.maxGet.toFixed(1)}, create ${r.maxCreate.toFixed(1)})`;
}

/** ToDo's metadata with (or without) a search index on INDEXED; the other DocTypes as generated. */
function metasWith(registry: Registry, indexed: boolean): DocTypeMeta[] {
  return registry.all().map(({ meta }) =>
    meta.name !== 'ToDo'
      ? meta
      : {
          ...meta,
          fields: meta.fields.map((f) => (f.fieldname === INDEXED ? { ...f, searchIndex: indexed } : f)),
        },
  );
}

runMain(async () => {
  const server = new URL(BENCH_MYSQL_URL);
  server.pathname = '/';
  const admin = knexFactory({ client: 'mysql2', connection: server.toString() });
  await admin.raw(`CREATE DATABASE \`${NAME}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  const url = new URL(server.toString());
  url.pathname = `/${NAME}`;
  const port = process.env.PORT ? Number(process.env.PORT) : await freePort();
  const [cmd, args] = pinned(detectPinning(), '0', process.execPath, [
    '--import',
    'tsx',
    path.join(ROOT, 'runtime/cli/main.ts'),
    'serve',
  ]);
  const svc = await startServer(cmd, args, {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: url.toString(),
      ADMIN_PASSWORD,
      LOG_LEVEL: 'warn',
    },
    ready: /^serving \d+ DocTypes on /,
    timeoutMs: 300_000,
    label: 'serve (MariaDB)',
  });
  const db = connect(url.toString(), { ...DEFAULT_TIMEOUTS, statementMs: 3_600_000 });
  try {
    const base = `http://127.0.0.1:${port}`;
    const auth = await apiToken(base);
    const stamp = '2026-01-01 00:00:00.000000';
    const names: string[] = [];
    const seeded = performance.now();
    for (let i = 0; i < ROWS; i += 2000) {
      const rows = [];
      for (let j = i; j < Math.min(ROWS, i + 2000); j++) {
        names.push(`bench${j}`);
        rows.push({
          name: `bench${j}`,
          description: `seeded row ${j}`,
          status: 'Open',
          priority: 'Medium',
          reference_name: `R${(j * 7919) % 100_000}`,
          creation: stamp,
          modified: stamp,
          owner: 'Administrator',
          modified_by: 'Administrator',
        });
      }
      await db.knex('tabToDo').insert(rows);
    }
    console.log(`seeded ${ROWS} ToDo rows in ${Math.round(performance.now() - seeded)} ms`);
    const registry = (require(path.join(ROOT, 'generated/index.ts')) as { registry: Registry }).registry;
    let buildMs = 5000;
    for (let round = 1; round <= ROUNDS; round++) {
      const alone = performance.now();
      const baseline = await load(base, auth, names, new Promise((resolve) => setTimeout(resolve, buildMs)));
      console.log(summary(`round ${round}, load alone`, baseline, performance.now() - alone));
      const started = performance.now();
      const migration = migrate(db, metasWith(registry, true)).then((r) => {
        if (r.refused.length || !r.plan.some((c) => c.kind === 'add_index'))
          throw new Error(`the index was not added: ${JSON.stringify(r.plan)}`);
        buildMs = performance.now() - started;
      });
      const during = await load(base, auth, names, migration);
      await migration;
      console.log(
        summary(
          `round ${round}, load while the index is built (${Math.round(buildMs)} ms)`,
          during,
          performance.now() - started,
        ),
      );
      const dropped = performance.now();
      const back = migrate(db, metasWith(registry, false));
      const duringDrop = await load(base, auth, names, back);
      await back;
      console.log(
        summary(`round ${round}, load while the index is dropped`, duringDrop, performance.now() - dropped),
      );
    }
  } finally {
    await db.close();
    await stopChild(svc.child);
    await admin.raw(`DROP DATABASE IF EXISTS \`${NAME}\``);
    await admin.destroy();
  }
  return 0;
});
