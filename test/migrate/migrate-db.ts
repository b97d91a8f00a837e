// A database of its own for a migration test (SQLite file, or a MariaDB or PostgreSQL database named migrate_* with
// TEST_MYSQL_URL or TEST_POSTGRES_URL),
// and DocType metadata built from partial Frappe JSON, so that a test can migrate one version, write rows, and migrate
// the next.
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import knexFactory from 'knex';
import type { Knex } from 'knex';
import { DEFAULT_TIMEOUTS, type Database } from '../../runtime/db/backend';
import { connect } from '../../runtime/db/connect';
import type { DocTypeMeta } from '../../runtime/meta/types';
import { docTypeIR } from '../helpers/doctype-ir';
import { postgresDatabase } from '../helpers/test-site';

/** A database for one test file. */
export interface MigrateDb {
  url: string;
  db: Database;
  knex: Knex;
  /** Closes and drops the database. */
  close(): Promise<void>;
}

/** Opens a fresh database (own file, or own MariaDB or PostgreSQL database). */
export async function openMigrateDb(): Promise<MigrateDb> {
  const suffix = `${process.pid}_${randomBytes(4).toString('hex')}`;
  const mysql = process.env.TEST_MYSQL_URL;
  let url: string;
  let drop: () => Promise<void>;
  const postgres = process.env.TEST_POSTGRES_URL;
  if (postgres) ({ url, drop } = await postgresDatabase(postgres, `migrate_${suffix}`));
  else if (mysql) {
    const name = `migrate_${suffix}`;
    const admin = knexFactory({ client: 'mysql2', connection: mysql });
    await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    await admin.destroy();
    const u = new URL(mysql);
    u.pathname = `/${name}`;
    url = u.toString();
    drop = async () => {
      const k = knexFactory({ client: 'mysql2', connection: mysql });
      await k.raw(`DROP DATABASE IF EXISTS \`${name}\``);
      await k.destroy();
    };
  } else {
    const dir = path.resolve(__dirname, '../tmp');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `migrate_${suffix}.sqlite`);
    url = `sqlite:${file}`;
    drop = async () => {
      for (const ext of ['', '-wal', '-shm', '-migrate-lock']) rmSync(file + ext, { force: true });
    };
  }
  const db = connect(url, { ...DEFAULT_TIMEOUTS, site: { reader_threads: 0 } });
  return {
    url,
    db,
    knex: db.knex,
    close: async () => {
      await db.close();
      await drop();
    },
  };
}

/** The metadata of a DocType given as partial Frappe JSON (module Test, hash naming unless said). */
export function metaOf(raw: { name: string } & Record<string, unknown>): DocTypeMeta {
  return docTypeIR({ autoname: 'hash', permissions: [{ role: 'System Manager', read: 1 }], ...raw }).meta;
}

/** Inserts documents (name + values) with the standard columns filled. */
export async function insertDocs(knex: Knex, table: string, docs: Record<string, unknown>[]): Promise<void> {
  const stamp = '2026-01-01 00:00:00.000000';
  await knex(table).insert(
    docs.map((d) => ({
      creation: stamp,
      modified: stamp,
      owner: 'Administrator',
      modified_by: 'Administrator',
      ...d,
    })),
  );
}

/** The table's rows ordered by name, as plain objects. */
export async function rowsOf(
  knex: Knex,
  table: string,
  columns: string[],
): Promise<Record<string, unknown>[]> {
  return (await knex(table)
    .select(['name', ...columns])
    .orderBy('name')) as Record<string, unknown>[];
}
