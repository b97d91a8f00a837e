// The backend interfaces (runtime/db/backend.ts, row-store.ts) on the suite's backend, through the core's view only:
// the scheme table, write transactions, change versions, the row store's system-table writes and series, the schema
// dialect, bulk writes and the change counter where the backend keeps one. Run with TEST_MYSQL_URL for MariaDB.
import type { Knex } from 'knex';
import { backendFor, BACKENDS, connect } from '../../runtime/db/connect';
import { indexName, SYSTEM_TABLES } from '../../runtime/db/migrate';
import { isDeadlockError, unavailableReason } from '../../runtime/db/unavailable';
import { inWriteTransaction } from '../../runtime/db/write-transaction';
import { isDuplicateKeyError } from '../../runtime/db/document-rows';
import { createTestSite, DB_KIND, type TestSite } from '../helpers/test-site';

const SCRATCH = '__BackendScratch';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite();
  await t.site.db.knex.schema.createTable(SCRATCH, (tb) => {
    tb.string('k', 40).notNullable();
    tb.integer('n').notNullable();
    tb.string('v', 40).nullable();
    tb.primary(['k', 'n']);
  });
});
afterAll(async () => {
  await t.site.db.knex.schema.dropTableIfExists(SCRATCH);
  await t.close();
});

const scratch = async (k: string) =>
  ((await t.site.db.knex(SCRATCH).where({ k }).orderBy('n')) as { n: number; v: string | null }[]).map(
    (r) => [Number(r.n), r.v],
  );
const note = (name: string) => ({
  name,
  creation: '2026-01-01 00:00:00.000000',
  modified: '2026-01-01 00:00:00.000000',
  owner: 'Administrator',
  modified_by: 'Administrator',
  docstatus: 0,
  idx: 0,
  title: name,
});

describe('the scheme table', () => {
  test('maps each DATABASE_URL scheme to one backend', () => {
    expect(backendFor('sqlite:./data/x.sqlite').name).toBe('sqlite');
    expect(backendFor('mysql://root@127.0.0.1:3306/x').name).toBe('mysql');
    expect(backendFor('mariadb://root@127.0.0.1:3306/x').name).toBe('mysql');
    const schemes = BACKENDS.flatMap((b) => b.schemes);
    expect(new Set(schemes).size).toBe(schemes.length);
  });

  test('refuses a URL no backend serves, naming the schemes it knows, and opens nothing', () => {
    expect(() => connect('oracle://db/x')).toThrow(
      /unsupported DATABASE_URL oracle:\/\/db\/x: use one of sqlite:, mysql:\/\//,
    );
    expect(() => connect('')).toThrow(/unsupported DATABASE_URL/);
  });
});

describe('write transactions', () => {
  test.each([false, true])(
    'commit when the work resolves, roll back when it throws (grouped %s)',
    async (grouped) => {
      const k = `tx-${String(grouped)}`;
      await inWriteTransaction(
        t.site.db,
        (q) => q(SCRATCH).insert({ k, n: 1, v: 'kept' }),
        undefined,
        grouped,
      );
      await expect(
        inWriteTransaction(
          t.site.db,
          async (q) => {
            await q(SCRATCH).insert({ k, n: 2, v: 'undone' });
            throw new Error('work failed');
          },
          undefined,
          grouped,
        ),
      ).rejects.toThrow('work failed');
      expect(await scratch(k)).toEqual([[1, 'kept']]);
    },
  );

  test('bulk writes: a window, and where the backend opens batches, a batch commits its works once closed', async () => {
    const writes = t.site.db.bulkWrites;
    expect(writes.window).toBeGreaterThanOrEqual(1);
    const batch = writes.openBatch?.();
    if (!batch) return;
    const ran = [
      batch.run((q) => q(SCRATCH).insert({ k: 'batch', n: 1, v: 'a' })),
      batch
        .run(async (q) => {
          await q(SCRATCH).insert({ k: 'batch', n: 2, v: 'b' });
          throw new Error('item failed');
        })
        .catch((err: Error) => err.message),
      batch.run((q) => q(SCRATCH).insert({ k: 'batch', n: 3, v: 'c' })),
    ];
    await batch.close();
    expect((await Promise.all(ran))[1]).toBe('item failed');
    expect(await scratch('batch')).toEqual([
      [1, 'a'],
      [3, 'c'],
    ]);
  });
});

describe('change versions', () => {
  test('a table version stays while nothing is written and moves after a committed write of it', async () => {
    const before = await t.site.db.changeVersion(t.site.db.knex, 'tabNote');
    expect(await t.site.db.changeVersion(t.site.db.knex, 'tabNote')).toBe(before);
    await inWriteTransaction(t.site.db, (q) => q('tabNote').insert(note('version-1')));
    expect(await t.site.db.changeVersion(t.site.db.knex, 'tabNote')).not.toBe(before);
  });

  test('the change counter, where the backend keeps one, moves the written table only', async () => {
    const counter = t.site.db.changeCounter;
    if (DB_KIND === 'mysql') expect(counter).toBeDefined();
    if (!counter) return;
    const before = await counter.read(['tabNote', 'tabToDo', 'tabNo Such Table']);
    expect(before.has('tabNo Such Table')).toBe(false);
    await inWriteTransaction(t.site.db, (q) => q('tabNote').insert(note('version-2')));
    const after = await counter.read(['tabNote', 'tabToDo']);
    expect(after.get('tabNote')).toBeGreaterThan(before.get('tabNote') as number);
    expect(after.get('tabToDo')).toBe(before.get('tabToDo'));
  });
});

describe('the row store on system tables', () => {
  test('insertRows writes every row, past one statement of rows', async () => {
    const rows = Array.from({ length: 150 }, (_, n) => ({ k: 'many', n, v: `v${n}` }));
    await inWriteTransaction(t.site.db, (q) => t.site.rows.insertRows(q, SCRATCH, rows));
    const [counted] = (await t.site.db.knex(SCRATCH).where({ k: 'many' }).count({ n: '*' })) as {
      n: unknown;
    }[];
    expect(Number(counted?.n)).toBe(150);
  });

  test('insertRowOnce keeps the first row of a key and ignores the next', async () => {
    const once = (v: string) => (q: Knex) =>
      t.site.rows.insertRowOnce(q, SCRATCH, { k: 'once', n: 1, v }, ['k', 'n']);
    await inWriteTransaction(t.site.db, once('first'));
    await inWriteTransaction(t.site.db, once('second'));
    expect(await scratch('once')).toEqual([[1, 'first']]);
  });

  test('nextSeriesValue counts per key, and a rolled-back transaction gives its number back', async () => {
    const next = (key: string) => inWriteTransaction(t.site.db, (q) => t.site.rows.nextSeriesValue(q, key));
    expect(await next('BK-')).toBe(1);
    expect(await next('BK-')).toBe(2);
    expect(await next('OTHER-')).toBe(1);
    await expect(
      inWriteTransaction(t.site.db, async (q) => {
        expect(await t.site.rows.nextSeriesValue(q, 'BK-')).toBe(3);
        throw new Error('undone');
      }),
    ).rejects.toThrow('undone');
    expect(await next('BK-')).toBe(3);
    const stored = (await t.site.db.knex(SYSTEM_TABLES.series).where({ name: 'BK-' }).first('current')) as {
      current: unknown;
    };
    expect(Number(stored.current)).toBe(3);
  });
});

describe('the schema dialect', () => {
  test('lists the tables and the indexes of a DocType table as migrate made them', async () => {
    const { schema, knex } = t.site.db;
    const tables = await schema.tables(knex);
    expect(tables).toEqual(expect.any(Set));
    for (const table of ['tabNote', 'tabToDo', SYSTEM_TABLES.schema, SYSTEM_TABLES.series, SCRATCH])
      expect(tables.has(table)).toBe(true);
    const indexes = await schema.indexes(knex, 'tabToDo');
    expect(indexes.has(indexName('tabToDo', 'modified'))).toBe(true);
    expect(indexes.has(indexName('tabToDo', 'no_such_column'))).toBe(false);
  });
});

describe("the driver's errors", () => {
  test('a duplicate key is told from other failures of the same insert', async () => {
    const failure = (row: Record<string, unknown>, table = SCRATCH) =>
      t.site.db
        .knex(table)
        .insert(row)
        .then(
          () => undefined,
          (err: unknown) => err,
        );
    await t.site.db.knex(SCRATCH).insert({ k: 'dup', n: 1, v: 'first' });
    const duplicate = await failure({ k: 'dup', n: 1, v: 'again' });
    expect(isDuplicateKeyError(t.site.db, duplicate)).toBe(true);
    expect(isDuplicateKeyError(t.site.db, await failure({ k: 'dup', n: 2, nope: 1 }))).toBe(false);
    expect(isDuplicateKeyError(t.site.db, await failure({ k: 'x' }, '__No Such Table'))).toBe(false);
    expect(isDuplicateKeyError(t.site.db, undefined)).toBe(false);
    expect(unavailableReason(duplicate, t.site.db.errors)).toBeUndefined();
  });

  test('a unique-index clash names its index, or on SQLite its column', async () => {
    const { knex, errors } = t.site.db;
    const table = '__BackendUnique';
    const index = indexName(table, 'v');
    await knex.schema.dropTableIfExists(table);
    await knex.schema.createTable(table, (tb) => {
      tb.string('k', 40).primary();
      tb.string('v', 40).nullable();
      tb.unique(['v'], { indexName: index });
    });
    const clash = (row: Record<string, unknown>) =>
      knex(table)
        .insert(row)
        .then(
          () => ({}) as Record<string, unknown>,
          (err: Record<string, unknown>) => (err.nativeError as Record<string, unknown> | undefined) ?? err,
        );
    try {
      await knex(table).insert({ k: 'a', v: 'same' });
      const onIndex = await clash({ k: 'b', v: 'same' });
      expect(isDuplicateKeyError(t.site.db, onIndex)).toBe(true);
      expect([index, 'v']).toContain(errors.duplicateKeyName(onIndex));
      const onPrimary = await clash({ k: 'a', v: 'other' });
      expect(isDuplicateKeyError(t.site.db, onPrimary)).toBe(true);
      expect([index, 'v']).not.toContain(errors.duplicateKeyName(onPrimary));
    } finally {
      await knex.schema.dropTableIfExists(table);
    }
  });

  test("an unreachable server is unavailable whatever the driver; the driver's own codes by its errors", () => {
    const { errors } = t.site.db;
    expect(unavailableReason({ code: 'ECONNREFUSED' }, errors)).toBe('ECONNREFUSED');
    expect(unavailableReason(new Error('wrapped', { cause: { code: 'ETIMEDOUT' } }), errors)).toBe(
      'ETIMEDOUT',
    );
    const own = { sqlite: 'SQLITE_BUSY_SNAPSHOT', mysql: 'ER_LOCK_WAIT_TIMEOUT', postgres: '55P03' }[DB_KIND];
    const foreign = DB_KIND === 'sqlite' ? 'ER_LOCK_WAIT_TIMEOUT' : 'SQLITE_BUSY_SNAPSHOT';
    expect(unavailableReason({ code: own }, errors)).toBe(own);
    expect(unavailableReason({ code: foreign }, errors)).toBeUndefined();
    expect(unavailableReason({ code: 'ER_PARSE_ERROR', message: 'syntax' }, errors)).toBeUndefined();
  });

  test("a deadlock's victim is told apart from an outage (503 either way, the health told only of an outage)", () => {
    const { errors } = t.site.db;
    const deadlocks = {
      sqlite: [],
      mysql: [{ code: 'ER_LOCK_DEADLOCK', errno: 1213 }, { errno: 1213 }],
      postgres: [{ code: '40P01' }, { code: '40001' }],
    }[DB_KIND];
    for (const deadlock of deadlocks) {
      expect(isDeadlockError(deadlock, errors)).toBe(true);
      expect(isDeadlockError(new Error('wrapped', { cause: deadlock }), errors)).toBe(true);
      expect(unavailableReason(deadlock, errors)).toBeUndefined();
    }
    // A lock wait past db_busy_timeout is a busy database (MariaDB 1205, PostgreSQL 55P03, SQLite SQLITE_BUSY).
    const lockWait = {
      sqlite: { code: 'SQLITE_BUSY' },
      mysql: { code: 'ER_LOCK_WAIT_TIMEOUT', errno: 1205 },
      postgres: { code: '55P03' },
    }[DB_KIND];
    expect(isDeadlockError(lockWait, errors)).toBe(false);
    expect(unavailableReason(lockWait, errors)).toBe(lockWait.code);
    expect(isDeadlockError({ code: 'ER_DUP_ENTRY', errno: 1062 }, errors)).toBe(false);
  });
});
