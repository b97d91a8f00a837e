// Group commit (SQLite): the write transactions of one turn share one commit, each rolled back alone when it throws,
// and none settles before its commit. Runs on SQLite in both suites: MariaDB keeps a knex transaction per write.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { connectSqlite, type SqliteDatabase } from '../../runtime/db/sqlite/backend';
import { DEFAULT_TIMEOUTS } from '../../runtime/db/backend';
import { BatchRolledBackError, inWriteTransaction } from '../../runtime/db/write-transaction';

let dir: string;
let db: SqliteDatabase;

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-group-commit-'));
  db = connectSqlite(`sqlite:${path.join(dir, 'site.sqlite')}`, DEFAULT_TIMEOUTS);
  await db.knex.schema.createTable('items', (t) => t.string('name').primary());
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The committed rows, as another reader sees them. */
const committed = () => db.readConnection().prepare('SELECT name FROM items ORDER BY name').pluck().all();
const insert = (name: string) => (q: Knex) => q('items').insert({ name });

test('the writes of one turn share one transaction: each sees the ones before it, no reader sees any before the commit', async () => {
  const seen: unknown[] = [];
  const first = inWriteTransaction(db, insert('a'));
  const second = inWriteTransaction(db, async (q) => {
    await q('items').insert({ name: 'b' });
    seen.push((await q('items').orderBy('name').pluck('name')) as string[], committed());
  });
  await Promise.all([first, second]);
  expect(seen).toEqual([['a', 'b'], []]);
  expect(committed()).toEqual(['a', 'b']);
});

test('a write settles only after its commit: the next read sees it', async () => {
  const seenAfter = await inWriteTransaction(db, insert('x')).then(() => committed());
  expect(seenAfter).toEqual(['x']);
});

test('a write that throws rolls back alone; the others of its turn commit', async () => {
  const results = await Promise.allSettled([
    inWriteTransaction(db, insert('keep-1')),
    inWriteTransaction(db, async (q) => {
      await q('items').insert({ name: 'dropped' });
      throw new Error('refused');
    }),
    inWriteTransaction(db, insert('keep-2')),
  ]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect(committed()).toEqual(['keep-1', 'keep-2']);
});

test('a write that waits on real I/O delays the commit; the writes queued behind it still commit', async () => {
  const slow = inWriteTransaction(db, async (q) => {
    await q('items').insert({ name: 'slow' });
    await new Promise((resolve) => setTimeout(resolve, 30));
  });
  const queued = inWriteTransaction(db, insert('queued'));
  await Promise.all([slow, queued]);
  expect(committed()).toEqual(['queued', 'slow']);
});

test('a failed commit rejects every write of the batch and keeps none of them', async () => {
  await db.knex.raw('PRAGMA foreign_keys = ON');
  await db.knex.schema.createTable('refs', (t) => t.string('name').primary());
  // A deferred foreign key is checked at COMMIT: the write itself succeeds, the commit of its batch fails.
  await db.knex.raw(
    'CREATE TABLE links (name TEXT PRIMARY KEY, ref TEXT REFERENCES refs(name) DEFERRABLE INITIALLY DEFERRED)',
  );
  const results = await Promise.allSettled([
    inWriteTransaction(db, insert('innocent')),
    inWriteTransaction(db, (q) => q('links').insert({ name: 'l1', ref: 'missing' })),
  ]);
  expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/);
  expect(committed()).toEqual([]);
  await inWriteTransaction(db, insert('after'));
  expect(committed()).toEqual(['after']);
});

test('a write that ends the whole transaction fails the writes released before it', async () => {
  const results = await Promise.allSettled([
    inWriteTransaction(db, insert('lost')),
    inWriteTransaction(db, async (q) => {
      await q.raw('ROLLBACK');
      throw new Error('broke the transaction');
    }),
    inWriteTransaction(db, insert('next-batch')),
  ]);
  expect((results[0] as PromiseRejectedResult).reason).toBeInstanceOf(BatchRolledBackError);
  expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/broke the transaction/);
  expect(results[2]?.status).toBe('fulfilled');
  expect(committed()).toEqual(['next-batch']);
});

test('queries outside a write transaction wait for the commit instead of joining the open batch', async () => {
  const write = inWriteTransaction(db, insert('w'));
  const outside = db.knex('items').pluck('name');
  await expect(outside).resolves.toEqual(['w']);
  await write;
});
