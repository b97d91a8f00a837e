// Reads that may be slow: on SQLite those whose plan scans (unindexed filters, counts, aggregates, deep offsets) run in
// reader threads with the same answers, fast ones stay on the event loop; on both databases a read past site config
// max_query_time is cancelled with 503 QueryTimeoutError, and the next reads are served.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSiteConfig } from '../../runtime/config/config';
import type { SqliteDatabase } from '../../runtime/db/sqlite/backend';
import { mayBeSlow, planIsSlow } from '../../runtime/db/sqlite/slow-plans';
import { createTestSite, DB_KIND, type TestSite } from '../helpers/test-site';

/** The SQLite database of a test site (the tests of reader threads run on SQLite only). */
const sqliteDb = (site: TestSite) => site.site.db as SqliteDatabase;

const ROWS = 200_000;
let t: TestSite;

beforeAll(async () => {
  // Reader threads at the process's priority here: these tests check answers and time limits, and at the default nice
  // 19 a 200,000-row read beside the other jest worker's CPU could take past max_query_time (reader_nice is tested below).
  t = await createTestSite({ site: { reader_nice: 0 } });
  const knex = t.site.db.knex;
  // One statement: a recursive CTE makes the rows (description 'row <n>', every third one Closed).
  // PostgreSQL takes a text into a timestamp column only cast.
  const now = `'2026-01-01 00:00:00.000000'${DB_KIND === 'postgres' ? '::timestamp' : ''}`;
  const sql =
    `insert into ?? (name, creation, modified, owner, modified_by, docstatus, idx, status, priority, description)
     with recursive seq(n) as (select 1 union all select n + 1 from seq where n < ${ROWS})
     select concat('bulk-', n), ${now}, ${now}, 'Administrator', 'Administrator', 0, 0,
            case when n % 3 = 0 then 'Closed' else 'Open' end, 'Medium', concat('row ', n) from seq`.replace(
      /concat\(('[^']*'), n\)/g,
      DB_KIND === 'sqlite' ? '($1 || n)' : 'concat($1, n)',
    );
  await knex.transaction(async (trx) => {
    // MariaDB stops a recursive CTE at max_recursive_iterations (1000 on some servers): raised for this connection.
    if (DB_KIND === 'mysql') await trx.raw(`set session max_recursive_iterations = ${ROWS + 1}`);
    await trx.raw(sql, ['tabToDo']);
  });
}, 120_000);
afterAll(() => t.close());

const get = (path: string) => t.http.get(path).set('Authorization', t.adminToken);
const q = (value: unknown) => encodeURIComponent(JSON.stringify(value));

describe('which reads may be slow (SQLite plans)', () => {
  test('plan lines: a scan is slow unless an unfiltered limited read in index order; a search is not', () => {
    const list = 'select json_array(`f0`) from `tabToDo` order by `modified` desc limit ?';
    expect(planIsSlow(['SCAN tabToDo USING INDEX modified_idx'], list, false)).toBe(false);
    expect(planIsSlow(['SCAN tabToDo USING INDEX modified_idx'], list, true)).toBe(true);
    expect(planIsSlow(['SCAN tabToDo'], list, false)).toBe(true);
    expect(planIsSlow(['SCAN tabToDo', 'USE TEMP B-TREE FOR ORDER BY'], list, false)).toBe(true);
    const filtered =
      'select json_array(`f0`) from `tabToDo` where `status` = ? order by `modified` desc limit ?';
    expect(planIsSlow(['SCAN tabToDo USING INDEX modified_idx'], filtered, false)).toBe(true);
    expect(planIsSlow(['SEARCH tabToDo USING INDEX modified_idx (modified>?)'], filtered, false)).toBe(false);
    expect(planIsSlow(['SEARCH tabToDo USING INDEX modified_idx (modified>?)'], filtered, true)).toBe(false);
    expect(planIsSlow(['SCAN CONSTANT ROW'], 'select 1', false)).toBe(false);
  });

  (DB_KIND === 'sqlite' ? test : test.skip)('real plans of list and count shapes', () => {
    const reader = sqliteDb(t).readConnection();
    const slow = (sql: string, bindings: unknown[], kind: 'rows' | 'count' = 'rows') =>
      mayBeSlow(reader, sql, bindings, kind);
    const page = 'select name from `tabToDo` order by `tabToDo`.`modified` desc limit ?';
    expect(slow(page, [21])).toBe(false);
    expect(slow(`${page} offset ?`, [21, 40])).toBe(false);
    expect(slow(`${page} offset ?`, [21, 200_000])).toBe(true);
    expect(
      slow('select name from `tabToDo` where `status` = ? order by `modified` desc limit ?', ['Open', 21]),
    ).toBe(true);
    expect(
      slow('select name from `tabToDo` where `modified` > ? order by `modified` desc limit ?', ['x', 21]),
    ).toBe(false);
    expect(slow('select count(*) as `count` from `tabToDo`', [], 'count')).toBe(true);
    expect(slow('select count(*) as `count` from `tabToDo` where `name` = ?', ['x'], 'count')).toBe(false);
    expect(
      slow('select count(*) as `count` from `tabToDo` where `description` like ?', ['%x%'], 'count'),
    ).toBe(true);
  });
});

(DB_KIND === 'sqlite' ? describe : describe.skip)('reader threads (SQLite)', () => {
  test('slow reads go to a reader thread and answer what the event loop would; fast ones stay', async () => {
    const pool = sqliteDb(t).readerPool;
    if (!pool) throw new Error('no reader pool');
    const run = jest.spyOn(pool, 'run');
    try {
      const fast = await get('/api/v2/document/ToDo?limit=5');
      expect(fast.status).toBe(200);
      expect(run).not.toHaveBeenCalled();

      const count = await get(`/api/v2/doctype/ToDo/count?filters=${q({ status: 'Closed' })}`);
      expect(count.status).toBe(200);
      expect(count.body.data).toBe(Math.floor(ROWS / 3));
      const grouped = await get(
        `/api/v2/document/ToDo?fields=${q(['status', 'count(name) as n'])}&group_by=status&order_by=status`,
      );
      expect(grouped.status).toBe(200);
      expect(grouped.body.data).toEqual([
        { status: 'Closed', n: Math.floor(ROWS / 3) },
        { status: 'Open', n: ROWS - Math.floor(ROWS / 3) },
      ]);
      const deep = await get(
        `/api/v2/document/ToDo?fields=${q(['name'])}&order_by=name%20asc&start=150000&limit=2`,
      );
      expect(deep.status).toBe(200);
      expect(run).toHaveBeenCalledTimes(3);
      // The same deep page read on the event loop, directly.
      const reader = sqliteDb(t).readConnection();
      const direct = reader
        .prepare('select name from `tabToDo` order by name asc limit 2 offset 150000')
        .pluck()
        .all();
      expect(deep.body.data.map((r: { name: string }) => r.name)).toEqual(direct);
    } finally {
      run.mockRestore();
    }
  });

  test('an error in a reader thread is the same error as on the event loop', async () => {
    const pool = sqliteDb(t).readerPool;
    if (!pool) throw new Error('no reader pool');
    await expect(pool.run('value', 'select count(*) from `no such table`', [], 5000)).rejects.toMatchObject({
      message: expect.stringContaining('no such table'),
    });
    await expect(
      pool.run('value', 'select count(*) from `tabToDo`', [], 5000),
    ).resolves.toBeGreaterThanOrEqual(ROWS);
  });
});

describe('max_query_time', () => {
  const slowCount = () =>
    get(
      `/api/v2/doctype/ToDo/count?filters=${q([['description', 'like', `%no such text ${Math.random()}%`]])}`,
    );

  afterEach(() => {
    t.site.config.site.max_query_time = 5000;
  });

  test('a read past the limit is 503 QueryTimeoutError; the reads after it are served', async () => {
    // Warm up (SQLite: a reader thread started) under the default limit.
    expect((await slowCount()).status).toBe(200);
    t.site.config.site.max_query_time = 1;
    const res = await slowCount();
    expect(res.status).toBe(503);
    expect(res.body.exc_type).toBe('QueryTimeoutError');
    expect(res.headers['retry-after']).toBeUndefined();
    expect(JSON.stringify(res.body)).toContain('max_query_time');
    t.site.config.site.max_query_time = 5000;
    const after = await slowCount();
    expect(after.status).toBe(200);
    expect(after.body.data).toBe(0);
    expect((await get('/api/v2/document/ToDo?limit=1')).status).toBe(200);
  }, 60_000);

  test('a list past the limit is cancelled the same way; several at once leave the service serving', async () => {
    t.site.config.site.max_query_time = 1;
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map((i) =>
        get(`/api/v2/document/ToDo?filters=${q([['description', 'like', `%nothing ${i}%`]])}&limit=5`),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([503, 503, 503, 503, 503]);
    t.site.config.site.max_query_time = 5000;
    expect(
      (await get(`/api/v2/document/ToDo?filters=${q([['description', 'like', '%row 7%']])}&limit=1`)).status,
    ).toBe(200);
    if (DB_KIND === 'sqlite') {
      const pool = sqliteDb(t).readerPool;
      // Terminated threads never exceed twice reader_threads.
      expect((pool?.threads.live ?? 0) + (pool?.threads.abandoned ?? 0)).toBeLessThanOrEqual(
        2 * t.site.config.site.reader_threads,
      );
    }
  }, 60_000);

  (DB_KIND === 'postgres' ? test : test.skip)(
    'PostgreSQL: a list under max_query_time gives its connection back with db_statement_timeout',
    async () => {
      t.site.config.site.max_query_time = 1234;
      const filters = q([['description', 'like', '%row 3%']]);
      expect((await get(`/api/v2/document/ToDo?filters=${filters}&limit=2`)).status).toBe(200);
      t.site.config.site.max_query_time = 5000;
      // As many at once as the pool holds: the list's connection is among them.
      const shown = (await Promise.all(
        Array.from({ length: 10 }, () => t.site.db.knex.raw('show statement_timeout')),
      )) as { rows: { statement_timeout: string }[] }[];
      expect(shown.map((r) => r.rows[0]!.statement_timeout)).not.toContain('1234ms');
    },
  );
});

(DB_KIND === 'sqlite' ? test : test.skip)(
  'reader_threads 0: no reader threads, every read on the event loop',
  async () => {
    const small = await createTestSite({ site: { reader_threads: 0 } });
    try {
      expect(sqliteDb(small).readerPool).toBeUndefined();
      const res = await small.http
        .get(`/api/v2/doctype/ToDo/count?filters=${q([['description', 'like', '%x%']])}`)
        .set('Authorization', small.adminToken);
      expect(res.status).toBe(200);
      expect(res.body.data).toBe(0);
    } finally {
      await small.close();
    }
  },
);

/** This process's threads (tid) with their nice value, from /proc (Linux). */
function niceByThread(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task'))
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // After "pid (comm) ": state is field 3; nice is field 19.
      out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // the thread ended meanwhile
    }
  return out;
}

// Linux only (per-thread nice); skipped where the process itself runs above 15 (an unprivileged thread cannot lower it).
(DB_KIND === 'sqlite' && existsSync('/proc/thread-self') && os.getPriority() <= 15 ? test : test.skip)(
  'reader_nice: each reader thread alone runs at that nice value, the event loop keeps the process priority',
  async () => {
    const mainNice = os.getPriority();
    const small = await createTestSite({ site: { reader_nice: 15 } });
    try {
      const before = niceByThread();
      expect([...before.values()].filter((n) => n === 15)).toEqual([]);
      // A count with a leading-wildcard like scans: it runs on a reader thread, started for it.
      const res = await small.http
        .get(`/api/v2/doctype/ToDo/count?filters=${q([['description', 'like', '%x%']])}`)
        .set('Authorization', small.adminToken);
      expect(res.status).toBe(200);
      expect(sqliteDb(small).readerPool?.threads.live).toBe(1);
      const after = niceByThread();
      const started = [...after].filter(([tid]) => !before.has(tid));
      // The reader thread (and the threads Node starts for a worker beside it) are new; the reader is at 15.
      expect(started.filter(([, nice]) => nice === 15)).toHaveLength(1);
      expect(after.get(process.pid)).toBe(mainNice);
      expect(os.getPriority()).toBe(mainNice);
    } finally {
      await small.close();
    }
  },
);

test('site config reader_nice: a whole number from 0 to 19, else a clear error naming it', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'reader-nice-'));
  try {
    const file = path.join(dir, 'site_config.json');
    const load = (value: unknown) => {
      writeFileSync(file, JSON.stringify({ reader_nice: value }));
      return loadSiteConfig(file, true);
    };
    expect(loadSiteConfig(undefined, false).reader_nice).toBe(19);
    expect(load(0).reader_nice).toBe(0);
    expect(load(10).reader_nice).toBe(10);
    for (const bad of [-1, 20, 2.5, '10', null])
      expect(() => load(bad)).toThrow(/reader_nice must be a whole number from 0 to 19/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
