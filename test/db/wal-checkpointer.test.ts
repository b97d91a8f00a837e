// WAL checkpoints in a worker thread (SQLite): the log is copied back into the database file without the event loop.
// Runs on SQLite in both suites: the checkpointer exists only there.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { DEFAULT_TIMEOUTS } from '../../runtime/db/backend';
import { connectSqlite, type SqliteDatabase } from '../../runtime/db/sqlite/backend';
import {
  FALLBACK_AUTOCHECKPOINT_PAGES,
  startWalCheckpointer,
} from '../../runtime/db/sqlite/wal-checkpointer';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-wal-'));
  file = path.join(dir, 'site.sqlite');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const size = () => statSync(file).size;
const PAYLOAD = 'x'.repeat(2000);

/** Commits `count` rows one transaction each: about a page of WAL per commit, far below the fallback limit. */
function writeRows(conn: BetterSqlite3.Database, count: number): void {
  const insert = conn.prepare('INSERT INTO items (body) VALUES (?)');
  for (let i = 0; i < count; i++) insert.run(PAYLOAD);
}

async function until(test: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 25)))
    if (test()) return true;
  return test();
}

test('the worker copies committed pages into the database file while the event loop connections stay under their limit', async () => {
  const db: SqliteDatabase = connectSqlite(`sqlite:${file}`, DEFAULT_TIMEOUTS);
  try {
    const reader = db.readConnection();
    expect(reader.pragma('wal_autocheckpoint', { simple: true })).toBe(FALLBACK_AUTOCHECKPOINT_PAGES);
    await db.knex.schema.createTable('items', (t) => {
      t.increments('id');
      t.text('body');
    });
    const before = size();
    const conn = (await db.knex.client.acquireConnection()) as BetterSqlite3.Database;
    try {
      writeRows(conn, 300);
    } finally {
      await db.knex.client.releaseConnection(conn);
    }
    expect(await until(() => size() > before + 300 * PAYLOAD.length, 3000)).toBe(true);
  } finally {
    await db.close();
  }
});

test('stop runs a last checkpoint and ends the thread', async () => {
  const conn = new BetterSqlite3(file);
  conn.pragma('journal_mode = WAL');
  conn.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
  conn.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, body TEXT)');
  writeRows(conn, 200);
  const before = size();
  const checkpointer = startWalCheckpointer(file);
  await checkpointer.stop();
  expect(size()).toBeGreaterThan(before + 200 * PAYLOAD.length);
  await checkpointer.stop();
  conn.close();
});
