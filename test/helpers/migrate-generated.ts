// Run with tsx: `tsx test/helpers/migrate-generated.ts <generated index.ts> <sqlite file> <report.json>` imports a
// generated registry, migrates it twice onto a fresh SQLite file and writes what happened as JSON. The fixture-scale
// test runs it in a child process, because importing ~3,000 generated modules through Jest's transform is very slow.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { connect } from '../../runtime/db/connect';
import { migrate } from '../../runtime/db/migrate';
import type { DocTypeMeta } from '../../runtime/meta/types';
import type { Registry } from '../../runtime/registry/registry';

/** What one run saw. */
export interface MigrateReport {
  /** Metadata of every DocType in the registry. */
  metas: DocTypeMeta[];
  /** `changed` of the first and of the second migrate. */
  first: string[];
  second: string[];
  /** Every table of the database → its columns. */
  columns: Record<string, string[]>;
  /** Milliseconds spent importing the registry and in each migrate. */
  ms: { import: number; first: number; second: number };
}

async function main([index, file, reportFile]: string[]): Promise<void> {
  if (!index || !file || !reportFile)
    throw new Error('usage: migrate-generated <index.ts> <sqlite file> <report.json>');
  const since = (start: number) => Math.round(performance.now() - start);
  let started = performance.now();
  const { registry } = require(path.resolve(index)) as { registry: Registry };
  const metas = registry.all().map((entry) => entry.meta);
  const ms = { import: since(started), first: 0, second: 0 };
  const db = connect(`sqlite:${file}`);
  try {
    started = performance.now();
    const first = await migrate(db, metas);
    ms.first = since(started);
    started = performance.now();
    const second = await migrate(db, metas);
    ms.second = since(started);
    const tables = (await db.knex('sqlite_master').where({ type: 'table' }).pluck('name')) as string[];
    const columns: Record<string, string[]> = {};
    for (const table of tables) columns[table] = Object.keys(await db.knex(table).columnInfo());
    const report: MigrateReport = { metas, first: first.changed, second: second.changed, columns, ms };
    writeFileSync(reportFile, JSON.stringify(report));
  } finally {
    await db.close();
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
