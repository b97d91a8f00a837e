// A type change (Data → Int) on a table of ROWS documents (default 500,000) through the migration, against the plain
// statement it is measured by: on SQLite `INSERT INTO copy SELECT * FROM table` (issue #31: ≤ 2×), on MariaDB a bare
// `ALTER TABLE … MODIFY` (≤ 1.5×). The migration's time includes its checks (the values that would not convert). On
// SQLite it also prints CPU time (steadier than wall time on a shared machine) against two more copies: with the
// table's indexes, and converting qty to an integer column with them (what a type change cannot do with less).
//   npx tsx bench/migrate-type-change.ts                          SQLite, in bench/tmp
//   BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/test npx tsx bench/migrate-type-change.ts   MariaDB (own database)
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import knexFactory from 'knex';
import { DEFAULT_TIMEOUTS, type Database } from '../runtime/db/backend';
import { connect } from '../runtime/db/connect';
import { migrate } from '../runtime/db/migrate';
import { docTypeIR } from '../test/helpers/doctype-ir';

const ROWS = Number(process.env.ROWS ?? 500_000);
const TABLE = 'tabBench Item';
const meta = (qty: string) =>
  docTypeIR({
    name: 'Bench Item',
    autoname: 'hash',
    fields: [
      { fieldname: 'title', fieldtype: 'Data' },
      { fieldname: 'qty', fieldtype: qty },
    ],
  }).meta;

async function seed(db: Database): Promise<void> {
  await migrate(db, [meta('Data')]);
  const stamp = '2026-01-01 00:00:00.000000';
  for (let i = 0; i < ROWS; i += 150) {
    const rows = [];
    for (let j = i; j < Math.min(ROWS, i + 150); j++)
      rows.push({
        name: `B${j}`,
        title: `item ${j}`,
        qty: String(j % 1000),
        creation: stamp,
        modified: stamp,
      });
    await db.knex(TABLE).insert(rows);
  }
}

/** CPU time of this process so far, in ms (user + system: SQLite runs in-process, its writes are system time). */
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** The CPU time of each timed work, by the order they ran. */
const cpu: number[] = [];

/** Wall time of `work`, in ms; its CPU time goes to `cpu` (steadier than wall time on a shared machine). */
async function time(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  const cpuStarted = cpuMs();
  await work();
  cpu.push(cpuMs() - cpuStarted);
  return performance.now() - started;
}

async function main(): Promise<void> {
  const mysql = process.env.BENCH_MYSQL_URL;
  let url: string;
  let drop = async () => undefined as unknown;
  if (mysql) {
    const name = `migrate_bench_${process.pid}`;
    const admin = knexFactory({ client: 'mysql2', connection: mysql });
    await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
    const u = new URL(mysql);
    u.pathname = `/${name}`;
    url = u.toString();
    drop = async () => {
      await admin.raw(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.destroy();
    };
  } else {
    const dir = path.resolve(__dirname, 'tmp');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `migrate-bench-${process.pid}.sqlite`);
    url = `sqlite:${file}`;
    drop = async () => {
      for (const ext of ['', '-wal', '-shm', '-migrate-lock']) rmSync(file + ext, { force: true });
    };
  }
  const db = connect(url, { ...DEFAULT_TIMEOUTS, statementMs: 3_600_000, site: { reader_threads: 0 } });
  try {
    await seed(db);
    // The seed's WAL is checkpointed first: its checkpoint would otherwise hold up whatever runs next.
    if (!mysql) await db.knex.raw('pragma wal_checkpoint(truncate)');
    let plain: number;
    let indexed = 0;
    let converted = 0;
    if (!mysql) await db.knex.raw('pragma wal_checkpoint(truncate)');
    if (mysql) {
      // The same change as a bare statement first (both then start from a table just written), put back untimed.
      plain = await time(() => db.knex.raw(`alter table \`${TABLE}\` modify \`qty\` int null default 0`));
      await db.knex.raw(`alter table \`${TABLE}\` modify \`qty\` varchar(140) null`);
    } else {
      // The copy has the table's own definition (its primary key); a second one its indexes too, as a rebuild has.
      const objects = (await db
        .knex('sqlite_master')
        .where({ tbl_name: TABLE })
        .whereNotNull('sql')
        .select('type', 'sql')) as {
        type: string;
        sql: string;
      }[];
      // `converting`: the copy's qty is an integer column, as the migration makes it. A copy into a table of the same
      // definition is SQLite's transfer optimization (records copied as they are, never decoded: about half the CPU of
      // any copy that converts a value), which no type change can use.
      const copy = async (name: string, withIndexes: boolean, converting = false) => {
        for (const o of objects)
          if (o.type === 'table' || withIndexes)
            await db.knex.raw(
              o.sql
                .replace(/[`"]tabBench Item[`"]/g, `"${name}"`)
                .replace(/[`"]idx_/, `"${name}_idx_`)
                .replace(/_idx_([^`"]*)[`"]/, '_idx_$1"')
                .replace(converting ? /`qty` varchar\(140\) null/ : /^$/, "`qty` integer null default '0'"),
            );
        await db.knex.raw(`insert into "${name}" select * from "${TABLE}"`);
      };
      plain = await time(() => copy('bench_copy', false));
      indexed = await time(() => copy('bench_copy_indexed', true));
      converted = await time(() => copy('bench_copy_converted', true, true));
      for (const name of ['bench_copy', 'bench_copy_indexed', 'bench_copy_converted'])
        await db.knex.raw(`drop table "${name}"`);
      await db.knex.raw('pragma wal_checkpoint(truncate)');
    }
    const migration = await time(async () => {
      const result = await migrate(db, [meta('Int')]);
      if (result.refused.length || !result.changed.length) throw new Error('the type change did not run');
    });
    const ratio = migration / plain;
    console.log(
      `${mysql ? 'mariadb' : 'sqlite'} Data→Int on ${ROWS} rows: migration ${Math.round(migration)} ms, ${mysql ? 'ALTER … MODIFY' : 'INSERT INTO copy SELECT'} ${Math.round(plain)} ms, ratio ${ratio.toFixed(2)} (limit ${mysql ? 1.5 : 2})` +
        (indexed
          ? `; copy with the same indexes ${Math.round(indexed)} ms, ratio ${(migration / indexed).toFixed(2)}`
          : ''),
    );
    // SQLite runs in this process: its CPU time, which other processes on the machine disturb far less than wall time.
    if (!mysql) {
      const [plainCpu, indexedCpu, convertedCpu, migrationCpu] = cpu as [number, number, number, number];
      const ms = (n: number) => `${Math.round(n)} ms`;
      console.log(
        `sqlite Data→Int on ${ROWS} rows, CPU: migration ${ms(migrationCpu)}; INSERT INTO copy SELECT ${ms(plainCpu)}, ratio ${(migrationCpu / plainCpu).toFixed(2)}; with the same indexes ${ms(indexedCpu)}, ratio ${(migrationCpu / indexedCpu).toFixed(2)}; converting qty, same indexes ${ms(convertedCpu)} (wall ${ms(converted)}), ratio ${(migrationCpu / convertedCpu).toFixed(2)}`,
      );
    }
  } finally {
    await db.close();
    await drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
