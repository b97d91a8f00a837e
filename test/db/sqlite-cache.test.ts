// Site config sqlite_cache_kb: every SQLite connection of the service (the writer, the event loop's reader, each reader
// thread) gets that page cache, so that RSS does not grow with the tables up to better-sqlite3's 16000 KiB each; a bad
// value is refused with an error naming the key. Runs on SQLite in both suites: the pragma exists only there.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSiteConfig } from '../../runtime/config/config';
import { DEFAULT_TIMEOUTS } from '../../runtime/db/backend';
import { connectSqlite, type SqliteDatabase } from '../../runtime/db/sqlite/backend';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-cache-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('each connection (writer, event-loop reader, reader thread) runs with PRAGMA cache_size of sqlite_cache_kb', async () => {
  const db: SqliteDatabase = connectSqlite(`sqlite:${path.join(dir, 'site.sqlite')}`, {
    ...DEFAULT_TIMEOUTS,
    site: { reader_threads: 1, sqlite_cache_kb: 300 },
  });
  try {
    const writer = (await db.knex.raw('PRAGMA cache_size')) as { cache_size: number }[];
    expect(writer[0]?.cache_size).toBe(-300);
    const reader = db.readConnection();
    expect(reader.pragma('cache_size', { simple: true })).toBe(-300);
    expect(await db.readerPool?.run('value', 'PRAGMA cache_size', [], 30_000)).toBe(-300);
  } finally {
    await db.close();
  }
});

test('site config sqlite_cache_kb: default 2048, a whole number of KiB from 64 to 1048576, else a clear error', () => {
  const file = path.join(dir, 'site_config.json');
  const load = (value: unknown) => {
    writeFileSync(file, JSON.stringify({ sqlite_cache_kb: value }));
    return loadSiteConfig(file, true);
  };
  expect(loadSiteConfig(undefined, false).sqlite_cache_kb).toBe(2048);
  expect(load(64).sqlite_cache_kb).toBe(64);
  expect(load(16000).sqlite_cache_kb).toBe(16000);
  for (const bad of [0, 63, -2000, 1_048_577, 2.5, '2048', null])
    expect(() => load(bad)).toThrow(/sqlite_cache_kb must be a whole number of KiB from 64 to 1048576/);
});
