// Document history's cost, A/B in one process: ToDo updates with track_changes (a Version per update) against the same
// updates untracked, and deletes that keep a Deleted Document against deletes that keep none (the registry without
// the history DocTypes, as main before the feature). Two SQLite sites (or two MariaDB databases with
// HISTORY_MYSQL_URL=mysql://root@127.0.0.1:3306), the same operations through runtime/operations as REST calls them,
// HISTORY_CONCURRENCY at a time (default 16: several writes share SQLite's group commit), in alternating rounds so that
// both sides see the same machine.
//   npx tsx bench/history-ab.ts     HISTORY_DOCS (per side and round, default 2000), HISTORY_ROUNDS (default 3)
// HISTORY_ORDER=random: each side updates and deletes its documents in a shuffled order, as requests come in, instead
// of the order they were inserted in (where neighbouring updates share the ToDo table's and its `modified` index's pages,
// which makes main's side cheaper than any real mix of updates; a Version's `docname` index entry is random either way).
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import knexFactory from 'knex';
import { registry as generated } from '../generated';
import { closeSite, openSite } from '../runtime/bootstrap';
import { DEFAULT_SITE_CONFIG } from '../runtime/config/config';
import { deleteDocument, insertDocument, updateDocument } from '../runtime/operations/document-operations';
import { createRegistry, type Registry } from '../runtime/registry/registry';
import { ADMINISTRATOR, type Site } from '../runtime/site';

const DOCS = Number(process.env.HISTORY_DOCS ?? 2000);
const ROUNDS = Number(process.env.HISTORY_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.HISTORY_CONCURRENCY ?? 16);
const MYSQL = process.env.HISTORY_MYSQL_URL;
const SHUFFLED = process.env.HISTORY_ORDER === 'random';
const TMP = path.join(__dirname, 'tmp');
const TMP_FILES = path.join(TMP, `history-files-${process.pid}`);

/** The registry as main had it: no Version, no Deleted Document, ToDo untracked. */
function withoutHistory(registry: Registry): Registry {
  return createRegistry(
    registry
      .all()
      .filter((b) => b.meta.name !== 'Version' && b.meta.name !== 'Deleted Document')
      .map((b) => {
        const meta = { ...b.meta };
        delete meta.trackChanges;
        return { ...b, meta };
      }),
  );
}

async function open(tag: string, registry: Registry): Promise<{ site: Site; drop: () => Promise<void> }> {
  const suffix = `${tag}_${process.pid}_${randomBytes(3).toString('hex')}`;
  let url: string;
  let drop: () => Promise<void>;
  if (MYSQL) {
    const name = `history_bench_${suffix}`;
    const admin = knexFactory({ client: 'mysql2', connection: MYSQL });
    await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    await admin.destroy();
    const u = new URL(MYSQL);
    u.pathname = `/${name}`;
    url = u.toString();
    drop = async () => {
      const k = knexFactory({ client: 'mysql2', connection: MYSQL });
      await k.raw(`DROP DATABASE IF EXISTS \`${name}\``);
      await k.destroy();
    };
  } else {
    mkdirSync(TMP, { recursive: true });
    const file = path.join(TMP, `history-${suffix}.sqlite`);
    url = `sqlite:${file}`;
    drop = async () => {
      for (const ext of ['', '-wal', '-shm', '-migrate-lock']) rmSync(file + ext, { force: true });
    };
  }
  const site = await openSite(
    {
      port: 0,
      host: '127.0.0.1',
      databaseUrl: url,
      adminPassword: 'bench-admin',
      adminPasswordDefaulted: false,
      site: { ...DEFAULT_SITE_CONFIG },
      filesPath: path.join(TMP_FILES, suffix),
    },
    registry,
  );
  return { site, drop };
}

/** Wall-clock and process CPU time spent by one side, summed over its chunks. */
interface Spent {
  ops: number;
  wallMs: number;
  cpuMs: number;
}

/** Runs `work` for each item, CONCURRENCY at a time, adding the time it took to `spent`. */
async function timed<T>(
  items: readonly T[],
  work: (item: T) => Promise<unknown>,
  spent: Spent,
): Promise<void> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
  const used = process.cpuUsage(cpu);
  spent.ops += items.length;
  spent.wallMs += Number(process.hrtime.bigint() - start) / 1e6;
  spent.cpuMs += (used.user + used.system) / 1000;
}

/** A copy of `items` in a random order (Fisher-Yates). */
function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

const CHUNK = 100;
const chunks = <T>(items: readonly T[]): T[][] =>
  Array.from({ length: Math.ceil(items.length / CHUNK) }, (_, i) => items.slice(i * CHUNK, (i + 1) * CHUNK));

async function main(): Promise<void> {
  const sides = [
    { tag: 'A', ...(await open('a', withoutHistory(generated))) },
    { tag: 'B', ...(await open('b', generated)) },
  ];
  const admin = { name: ADMINISTRATOR, roles: new Set(['Administrator', 'System Manager', 'All']) };
  const callers = sides.map((side) => ({ site: side.site, user: admin, version: 2 as const }));
  const spent = (): Spent => ({ ops: 0, wallMs: 0, cpuMs: 0 });
  const totals = { update: [spent(), spent()], delete: [spent(), spent()] };
  for (let round = 0; round < ROUNDS; round++) {
    const names: string[][] = [];
    for (const c of callers) {
      const mine: string[] = [];
      for (let i = 0; i < DOCS; i++)
        mine.push((await insertDocument(c, 'ToDo', { description: `seed ${i}` })).name);
      names.push(SHUFFLED ? shuffled(mine) : mine);
    }
    // Chunks alternate between the sides (the first side alternating too): both see the same machine.
    for (const op of ['update', 'delete'] as const) {
      const parts = names.map(chunks);
      for (let k = 0; k < (parts[0]?.length ?? 0); k++)
        for (const s of (k + round) % 2 ? [1, 0] : [0, 1]) {
          const c = callers[s] as (typeof callers)[number];
          const work =
            op === 'update'
              ? (name: string) => updateDocument(c, 'ToDo', name, { description: `changed ${round}` })
              : (name: string) => deleteDocument(c, 'ToDo', name);
          await timed(parts[s]?.[k] ?? [], work, totals[op][s] as Spent);
        }
    }
  }
  const db = MYSQL ? 'MariaDB' : 'SQLite';
  for (const op of ['update', 'delete'] as const) {
    const [a, b] = totals[op] as [Spent, Spent];
    const rate = (x: Spent) => (x.ops / x.wallMs) * 1000;
    const cpu = (x: Spent) => (x.cpuMs * 1000) / x.ops;
    console.log(
      `${db} ToDo ${op}s (${a.ops} a side, ${CONCURRENCY} at a time${SHUFFLED ? ', random order' : ''}): main ${rate(a).toFixed(0)}/s ` +
        `${cpu(a).toFixed(0)} us CPU each, history ${rate(b).toFixed(0)}/s ${cpu(b).toFixed(0)} us CPU each; ` +
        `history/main ${(rate(b) / rate(a)).toFixed(2)} by wall clock, ${(cpu(a) / cpu(b)).toFixed(2)} by CPU`,
    );
  }
  for (const side of sides) {
    await closeSite(side.site);
    await side.drop();
  }
  rmSync(TMP_FILES, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
