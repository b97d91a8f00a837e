// Read snapshots (SQLite): one read transaction per event-loop turn, never hiding this process's own commits.
// Runs on SQLite in both suites: the snapshot exists only there.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { DEFAULT_TIMEOUTS } from '../../runtime/db/backend';
import { connectSqlite, type SqliteDatabase } from '../../runtime/db/sqlite/backend';
import { inWriteTransaction } from '../../runtime/db/write-transaction';

const checkPhase = () => new Promise<void>((resolve) => setImmediate(resolve));

let dir: string;
let db: SqliteDatabase;
let read: () => BetterSqlite3.Database;

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-snapshot-'));
  db = connectSqlite(`sqlite:${path.join(dir, 'site.sqlite')}`, DEFAULT_TIMEOUTS);
  await db.knex.schema.createTable('items', (t) => t.string('name').primary());
  read = db.readConnection;
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const names = (conn: BetterSqlite3.Database) =>
  conn.prepare('SELECT name FROM items ORDER BY name').pluck().all();

test('the reads of one turn share a read transaction that ends in the check phase', async () => {
  const reader = read();
  expect(reader.inTransaction).toBe(true);
  expect(read()).toBe(reader);
  expect(names(reader)).toEqual([]);
  await checkPhase();
  expect(reader.inTransaction).toBe(false);
});

test('a row the write connection commits in the middle of a turn is seen by the next read of that turn', async () => {
  expect(names(read())).toEqual([]);
  await db.knex('items').insert({ name: 'a' });
  expect(names(read())).toEqual(['a']);
  await db.knex('items').where({ name: 'a' }).update({ name: 'b' });
  expect(names(read())).toEqual(['b']);
});

test('while the write connection is inside a transaction, reads see only what is committed, then the commit at once', async () => {
  expect(names(read())).toEqual([]);
  await db.knex.transaction(async (trx) => {
    await trx('items').insert({ name: 'pending' });
    const reader = read();
    expect(reader.inTransaction).toBe(false);
    expect(names(reader)).toEqual([]);
  });
  expect(names(read())).toEqual(['pending']);
});

test('inside an open group-commit batch the reads keep a snapshot without its rows, and see them once it commits', async () => {
  const seen: unknown[] = [];
  const first = inWriteTransaction(db, (q) => q('items').insert({ name: 'batched' }));
  const second = inWriteTransaction(db, async () => {
    const reader = read();
    seen.push(reader.inTransaction, names(reader), read() === reader && reader.inTransaction);
  });
  await Promise.all([first, second]);
  expect(seen).toEqual([true, [], true]);
  expect(names(read())).toEqual(['batched']);
});

test('a commit by another connection (another process) is seen from the next turn', async () => {
  const other = new BetterSqlite3(path.join(dir, 'site.sqlite'));
  try {
    expect(names(read())).toEqual([]);
    other.prepare("INSERT INTO items (name) VALUES ('elsewhere')").run();
    expect(names(read())).toEqual([]);
    await checkPhase();
    expect(names(read())).toEqual(['elsewhere']);
  } finally {
    other.close();
  }
});

test('closing the database with a snapshot open is clean', async () => {
  read();
  await db.close();
  await checkPhase();
  db = connectSqlite(`sqlite:${path.join(dir, 'site.sqlite')}`, DEFAULT_TIMEOUTS);
});
