// The row store: one implementation per backend, chosen when the site opens, and the same behaviour through the
// interface on each (run the suite with TEST_MYSQL_URL for the MariaDB one, TEST_POSTGRES_URL for PostgreSQL's). Callers outside the stores never ask
// which database they are on.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inWriteTransaction } from '../../runtime/db/write-transaction';
import { MysqlRowStore } from '../../runtime/db/mysql/row-store';
import { PostgresRowStore } from '../../runtime/db/postgres/row-store';
import { SqliteRowStore } from '../../runtime/db/sqlite/row-store';
import type { DocData } from '../../runtime/db/row-store';
import { DuplicateEntryError } from '../../runtime/errors/errors';
import type { Caller } from '../../runtime/document/caller';
import { createDocument } from '../../runtime/operations/document-operations';
import type { DocTypeBinding } from '../../runtime/registry/registry';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, DB_KIND, type TestSite } from '../helpers/test-site';

let t: TestSite;
let widget: DocTypeBinding;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  widget = t.site.registry.get('Widget') as DocTypeBinding;
});
afterAll(() => t.close());

const caller = (): Caller => ({
  site: t.site,
  user: { name: 'Administrator', roles: new Set(['Administrator', 'System Manager', 'All']) },
  version: 2,
});
const partNames = (doc: DocData | undefined) =>
  ((doc?.parts as DocData[] | undefined) ?? []).map((r) => [r.part_name, r.idx]);

test("the site's row store is its backend's", () => {
  const stores = { sqlite: SqliteRowStore, mysql: MysqlRowStore, postgres: PostgresRowStore };
  expect(t.site.rows).toBeInstanceOf(stores[DB_KIND]);
});

test('read, load, update, exists, takenByOther and delete through the interface', async () => {
  const { doc } = await createDocument(caller(), 'Widget', {
    title: 'row store',
    code: 'RS-1',
    parts: [{ part_name: 'a' }, { part_name: 'b' }, { part_name: 'c' }],
  });
  const name = String(doc.name);
  const read = await t.site.rows.read(widget, name);
  expect(read?.title).toBe('row store');
  expect(partNames(read)).toEqual([
    ['a', 1],
    ['b', 2],
    ['c', 3],
  ]);
  expect((read?.parts as DocData[])[0]?.doctype).toBe('Widget Part');
  expect(await t.site.rows.read(widget, 'no such widget')).toBeUndefined();

  await inWriteTransaction(t.site.db, async (trx) => {
    const loaded = (await t.site.rows.load(trx, widget, name, { forUpdate: true })) as DocData;
    expect(loaded).toEqual(read);
    const [a, , c] = loaded.parts as DocData[];
    const next: DocData = {
      ...loaded,
      title: 'row store changed',
      parts: [
        { ...c, idx: 1 },
        { ...a, part_name: 'a2', idx: 2 },
        { ...(a as DocData), name: `${name}-new`, part_name: 'n', idx: 3 },
      ],
    };
    await t.site.rows.update(trx, widget, next, loaded);
    expect(await t.site.rows.linkTarget(trx, widget, name)).toEqual({ name, docstatus: 0 });
    expect(await t.site.rows.linkTarget(trx, widget, 'no such widget')).toBeUndefined();
    expect(await t.site.rows.takenByOther(trx, widget, 'code', 'RS-1', 'another')).toBe(true);
    expect(await t.site.rows.takenByOther(trx, widget, 'code', 'RS-1', name)).toBe(false);
  });
  const updated = await t.site.rows.read(widget, name);
  expect(updated?.title).toBe('row store changed');
  expect(partNames(updated)).toEqual([
    ['c', 1],
    ['a2', 2],
    ['n', 3],
  ]);

  await inWriteTransaction(t.site.db, (trx) => t.site.rows.delete(trx, widget, name));
  expect(await t.site.rows.read(widget, name)).toBeUndefined();
  expect(await t.site.db.knex('tabWidget Part').where('parent', name)).toEqual([]);
});

test('inserting a taken name is 409 DuplicateEntryError and writes nothing', async () => {
  const { doc } = await createDocument(caller(), 'Widget', { title: 'taken', parts: [{ part_name: 'x' }] });
  const stored = (await t.site.rows.read(widget, String(doc.name))) as DocData;
  await expect(
    inWriteTransaction(t.site.db, (trx) =>
      t.site.rows.insert(trx, widget, { ...stored, title: 'second', parts: [] }),
    ),
  ).rejects.toBeInstanceOf(DuplicateEntryError);
  expect((await t.site.rows.read(widget, String(doc.name)))?.title).toBe('taken');
});

test('list SELECT and COUNT run through the row store', async () => {
  const before = await t.http
    .get('/api/v2/document/Widget?fields=["name"]&limit=1000')
    .set({ Authorization: t.adminToken });
  const count = await t.http.get('/api/v2/doctype/Widget/count').set({ Authorization: t.adminToken });
  expect(count.body.data).toBe(before.body.data.length);
});

test('document-rows.ts, read-doc.ts, run-query.ts and the checks never ask which database they are on', () => {
  const runtime = join(__dirname, '..', '..', 'runtime');
  const files = [
    'db/document-rows.ts',
    'query/read-doc.ts',
    'document/checks.ts',
    'document/lifecycle.ts',
    'query/run-query.ts',
    'middleware/request-log.ts',
    'operations/document-operations.ts',
    'files/file-rules.ts',
    'files/file-access.ts',
  ];
  const found = files.flatMap((file) =>
    readFileSync(join(runtime, file), 'utf8')
      .split('\n')
      .filter((line) => /\bdialect\b|sqliteConnection|readConnection|\.model\.query/.test(line))
      .map((line) => `${file}: ${line.trim()}`),
  );
  expect(found).toEqual([]);
});

test('a generated objection model reads the same rows, child rows through relationMappings', async () => {
  const { doc } = await createDocument(caller(), 'Widget', {
    title: 'model',
    parts: [{ part_name: 'p1' }, { part_name: 'p2' }],
  });
  const rows = (await widget.model
    .query(t.site.db.knex)
    .where('name', String(doc.name))
    .withGraphFetched('parts')) as unknown as {
    title: string;
    parts: { part_name: string; parenttype: string }[];
  }[];
  expect(rows.map((r) => [r.title, r.parts.map((p) => [p.part_name, p.parenttype]).sort()])).toEqual([
    [
      'model',
      [
        ['p1', 'Widget'],
        ['p2', 'Widget'],
      ],
    ],
  ]);
});

test('names and values with quotes, backticks, placeholders and SQL are bound, never spliced into a statement', async () => {
  for (const hostile of [
    "a'b",
    'c`d',
    'e"f',
    'g?h',
    "x' or '1'='1",
    'y`; drop table `tabWidget',
    'z\\',
    '✓ ünï',
  ]) {
    expect(await t.site.rows.read(widget, hostile)).toBeUndefined();
    const { doc } = await createDocument(caller(), 'Widget', {
      title: hostile,
      code: `code ${hostile}`,
      parts: [{ part_name: hostile }],
    });
    const name = String(doc.name);
    const read = await t.site.rows.read(widget, name);
    expect([read?.title, read?.code, partNames(read)]).toEqual([hostile, `code ${hostile}`, [[hostile, 1]]]);
    await inWriteTransaction(t.site.db, async (trx) => {
      expect(await t.site.rows.linkTarget(trx, widget, hostile)).toBeUndefined();
      expect(await t.site.rows.takenByOther(trx, widget, 'code', `code ${hostile}`, 'another')).toBe(true);
      expect(await t.site.rows.takenByOther(trx, widget, 'code', `code ${hostile}`, name)).toBe(false);
    });
  }
});

test('linkTarget reads the columns asked for in its one statement, decoded as a read decodes them', async () => {
  const { doc } = await createDocument(caller(), 'Widget', {
    title: 'link target columns',
    qty: 3,
    amount: 12.5,
    active: 1,
    due_date: '2024-02-29',
    starts_at: '2024-02-29 08:30:00',
    start_time: '7:05:00',
    payload: { a: [1, 2] },
  });
  const name = String(doc.name);
  const read = (await t.site.rows.read(widget, name)) as DocData;
  const columns = [
    'qty',
    'amount',
    'active',
    'due_date',
    'starts_at',
    'start_time',
    'payload',
    'creation',
    'idx',
  ];
  const want = Object.fromEntries(columns.map((c) => [c, read[c]]));
  // Outside a transaction (committed rows) and inside one (the locking read): the same values.
  const committed = await t.site.rows.linkTarget(t.site.db.knex, widget, name, columns);
  expect(committed).toMatchObject({ name, docstatus: 0, values: want });
  await inWriteTransaction(t.site.db, async (trx) => {
    expect(await t.site.rows.linkTarget(trx, widget, name, columns)).toMatchObject({ values: want });
    expect(await t.site.rows.linkTarget(trx, widget, 'no such widget', columns)).toBeUndefined();
  });
  expect(want).toMatchObject({ qty: 3, amount: 12.5, due_date: '2024-02-29', start_time: '7:05:00' });
});

test('a write transaction rolls back when its work throws, and refuses queries after it ended', async () => {
  let late: ((q: unknown) => Promise<unknown>) | undefined;
  await expect(
    inWriteTransaction(t.site.db, async (trx) => {
      await trx('tabWidget').insert({
        name: 'rolled back rs',
        title: 'gone',
        creation: '2026-01-01 00:00:00',
        modified: '2026-01-01 00:00:00',
      });
      late = () => trx('tabWidget').where('name', 'rolled back rs').first();
      throw new Error('work failed');
    }),
  ).rejects.toThrow('work failed');
  expect(await t.site.rows.read(widget, 'rolled back rs')).toBeUndefined();
  await expect(late?.(undefined)).rejects.toThrow(/Transaction query already complete/);
  // Every pooled connection is usable and outside a transaction: concurrent transactions commit.
  await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      createDocument(caller(), 'Widget', { title: `after rollback ${i}` }),
    ),
  );
  const { doc } = await createDocument(caller(), 'Widget', { title: 'after rollback' });
  expect((await t.site.rows.read(widget, String(doc.name)))?.title).toBe('after rollback');
});
