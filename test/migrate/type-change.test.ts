// Type and length changes on a table holding documents: converted in place (SQLite: table rebuild; MariaDB: MODIFY),
// or refused with SchemaConflictError naming the field, the row count and documents, the table untouched.
import { migrate } from '../../runtime/db/migrate';
import { indexName } from '../../runtime/db/table-columns';
import { insertDocs, metaOf, openMigrateDb, rowsOf, type MigrateDb } from './migrate-db';

let m: MigrateDb;
beforeEach(async () => {
  m = await openMigrateDb();
});
afterEach(async () => {
  await m.close();
});

const item = (fields: Record<string, unknown>[]) => metaOf({ name: 'Mig Item', fields });

test('Data → Int converts stored numbers; the column sorts and filters as numbers', async () => {
  await migrate(m.db, [
    item([
      { fieldname: 'qty', fieldtype: 'Data' },
      { fieldname: 'title', fieldtype: 'Data', search_index: 1 },
    ]),
  ]);
  await insertDocs(m.knex, 'tabMig Item', [
    { name: 'A', qty: '12', title: 'a' },
    { name: 'B', qty: '42', title: 'b' },
    { name: 'C', qty: '5', title: 'c' },
    { name: 'D', qty: '', title: 'd' },
  ]);
  const result = await migrate(m.db, [
    item([
      { fieldname: 'qty', fieldtype: 'Int' },
      { fieldname: 'title', fieldtype: 'Data', search_index: 1 },
    ]),
  ]);
  expect(result.refused).toEqual([]);
  expect(result.plan.map((c) => c.kind)).toEqual(['change_type']);
  // D's empty text becomes NULL first (the statement is planned only when such values exist).
  expect(result.plan[0]!.statements[0]).toMatch(/^update .* = NULL where .*qty.* = ''$/i);
  expect(result.changed).toEqual(['Mig Item']);
  const rows = await m.knex('tabMig Item').select('name').where('qty', '>', 5).orderBy('qty', 'desc');
  expect(rows.map((r: { name: string }) => r.name)).toEqual(['B', 'A']);
  expect(await rowsOf(m.knex, 'tabMig Item', ['qty', 'title'])).toEqual([
    { name: 'A', qty: 12, title: 'a' },
    { name: 'B', qty: 42, title: 'b' },
    { name: 'C', qty: 5, title: 'c' },
    { name: 'D', qty: null, title: 'd' },
  ]);
  // The index of an unchanged field survives the rebuild.
  expect(
    [...(await m.db.schema.indexes(m.knex, 'tabMig Item')).keys()].some((n) => n.endsWith('_title')),
  ).toBe(true);
  // Nothing is pending afterwards.
  expect(
    (
      await migrate(
        m.db,
        [
          item([
            { fieldname: 'qty', fieldtype: 'Int' },
            { fieldname: 'title', fieldtype: 'Data', search_index: 1 },
          ]),
        ],
        { full: true },
      )
    ).plan,
  ).toEqual([]);
});

test('a value that would not convert refuses the change, naming the field, the count and the documents', async () => {
  await migrate(m.db, [item([{ fieldname: 'qty', fieldtype: 'Data' }])]);
  await insertDocs(m.knex, 'tabMig Item', [
    { name: 'A', qty: '12' },
    { name: 'B', qty: 'twelve' },
    { name: 'C', qty: '7.25' },
    // Refused on every database alike (SQLite's numeric affinity alone would take it as 42).
    { name: 'D', qty: ' 42 ' },
    // Equal to an integer in SQLite's comparison, refused by MariaDB's and PostgreSQL's patterns: refused everywhere.
    { name: 'E', qty: '1.0' },
    { name: 'F', qty: '1e3' },
    { name: 'G', qty: '+5' },
    // A trailing newline: MariaDB's regexp `$` also matches before one.
    { name: 'H', qty: '5\n' },
  ]);
  const before = await rowsOf(m.knex, 'tabMig Item', ['qty']);
  const columns = await m.db.schema.columns(m.knex, 'tabMig Item');
  const result = await migrate(m.db, [item([{ fieldname: 'qty', fieldtype: 'Int' }])]);
  expect(result.refused).toHaveLength(1);
  expect(result.refused[0]!.refusal).toMatch(
    /^Mig Item: cannot change qty from varchar\(140\) to \w+: 6 rows hold a value that would not convert exactly \("B", "C", "D", "E", "F"\)$/,
  );
  expect(result.changed).toEqual([]);
  expect(await rowsOf(m.knex, 'tabMig Item', ['qty'])).toEqual(before);
  expect(await m.db.schema.columns(m.knex, 'tabMig Item')).toEqual(columns);
});

test('Data → Check takes 0 and 1 only: a 2 or a -1 refuses the change (a Check answers 0 or 1)', async () => {
  await migrate(m.db, [item([{ fieldname: 'flag', fieldtype: 'Data' }])]);
  await insertDocs(m.knex, 'tabMig Item', [
    { name: 'A', flag: '1' },
    { name: 'B', flag: '2' },
    { name: 'C', flag: '0' },
    { name: 'D', flag: '-1' },
  ]);
  const before = await rowsOf(m.knex, 'tabMig Item', ['flag']);
  const refused = await migrate(m.db, [item([{ fieldname: 'flag', fieldtype: 'Check' }])]);
  expect(refused.refused[0]?.refusal).toMatch(/cannot change flag .*2 rows hold .*\("B", "D"\)/);
  expect(await rowsOf(m.knex, 'tabMig Item', ['flag'])).toEqual(before);
  await m.knex('tabMig Item').whereIn('name', ['B', 'D']).update({ flag: '1' });
  const ok = await migrate(m.db, [item([{ fieldname: 'flag', fieldtype: 'Check' }])]);
  expect(ok.refused).toEqual([]);
  expect((await rowsOf(m.knex, 'tabMig Item', ['flag'])).map((r) => Number(r.flag))).toEqual([1, 1, 0, 1]);
});

test('Date → Datetime converts every date to that day at midnight (exact, never refused)', async () => {
  await migrate(m.db, [item([{ fieldname: 'day', fieldtype: 'Date' }])]);
  await insertDocs(m.knex, 'tabMig Item', [
    { name: 'A', day: '2026-01-02' },
    { name: 'B', day: null },
    { name: 'C', day: '1999-12-31' },
  ]);
  const result = await migrate(m.db, [item([{ fieldname: 'day', fieldtype: 'Datetime' }])]);
  expect(result.refused).toEqual([]);
  expect(result.changed).toEqual(['Mig Item']);
  const days = (await m.knex('tabMig Item').orderBy('name').select('name', 'day')) as {
    name: string;
    day: unknown;
  }[];
  const text = (v: unknown) =>
    v instanceof Date
      ? v
          .toISOString()
          .replace('T', ' ')
          .replace(/\.\d+Z$/, '')
      : v === null
        ? null
        : String(v);
  expect(days.map((d) => [d.name, text(d.day)?.replace(/\.0+$/, '') ?? null])).toEqual([
    ['A', '2026-01-02 00:00:00'],
    ['B', null],
    ['C', '1999-12-31 00:00:00'],
  ]);
  // Filters compare them as datetimes.
  expect(await m.knex('tabMig Item').where('day', '>=', '2026-01-02 00:00:00').pluck('name')).toEqual(['A']);
});

test('one edit refusing several fields names every one of them at once', async () => {
  await migrate(m.db, [
    item([
      { fieldname: 'qty', fieldtype: 'Data' },
      { fieldname: 'price', fieldtype: 'Float' },
    ]),
  ]);
  await insertDocs(m.knex, 'tabMig Item', [{ name: 'A', qty: 'many', price: 2.5 }]);
  const result = await migrate(m.db, [
    item([
      { fieldname: 'qty', fieldtype: 'Int' },
      { fieldname: 'price', fieldtype: 'Int' },
    ]),
  ]);
  expect(result.refused).toHaveLength(1);
  expect(result.refused[0]!.refusal).toMatch(/cannot change qty .*; .*cannot change price /);
});

test('Int → Float and Float → Currency keep the values; a fraction refuses Float → Int', async () => {
  await migrate(m.db, [
    item([
      { fieldname: 'n', fieldtype: 'Int' },
      { fieldname: 'f', fieldtype: 'Float' },
    ]),
  ]);
  await insertDocs(m.knex, 'tabMig Item', [
    { name: 'A', n: 3, f: 7.25 },
    { name: 'B', n: -4, f: 2 },
  ]);
  const ok = await migrate(m.db, [
    item([
      { fieldname: 'n', fieldtype: 'Float' },
      { fieldname: 'f', fieldtype: 'Currency' },
    ]),
  ]);
  expect(ok.refused).toEqual([]);
  expect(await rowsOf(m.knex, 'tabMig Item', ['n', 'f'])).toEqual([
    { name: 'A', n: 3, f: 7.25 },
    { name: 'B', n: -4, f: 2 },
  ]);
  const refused = await migrate(m.db, [
    item([
      { fieldname: 'n', fieldtype: 'Float' },
      { fieldname: 'f', fieldtype: 'Int' },
    ]),
  ]);
  expect(refused.refused[0]?.refusal).toMatch(/cannot change f .*1 row holds .*\("A"\)/);
});

test('Data → Text takes long values; a shorter length refuses values that do not fit', async () => {
  await migrate(m.db, [item([{ fieldname: 'note', fieldtype: 'Data' }])]);
  await insertDocs(m.knex, 'tabMig Item', [
    { name: 'A', note: 'x'.repeat(100) },
    { name: 'B', note: 'short' },
  ]);
  const shorter = await migrate(m.db, [item([{ fieldname: 'note', fieldtype: 'Data', length: 50 }])]);
  expect(shorter.refused[0]?.refusal).toMatch(
    /cannot change note from varchar\(140\) to varchar\(50\): 1 row holds .*\("A"\)/,
  );
  const text = await migrate(m.db, [item([{ fieldname: 'note', fieldtype: 'Text' }])]);
  expect(text.refused).toEqual([]);
  await m
    .knex('tabMig Item')
    .where({ name: 'B' })
    .update({ note: 'y'.repeat(500) });
  expect((await rowsOf(m.knex, 'tabMig Item', ['note'])).map((r) => String(r.note).length)).toEqual([
    100, 500,
  ]);
});

test('a unique index survives the conversion and still refuses a repeated value', async () => {
  const fields = (qty: string) => [
    { fieldname: 'code', fieldtype: 'Data', unique: 1 },
    { fieldname: 'qty', fieldtype: qty },
  ];
  await migrate(m.db, [item(fields('Data'))]);
  await insertDocs(m.knex, 'tabMig Item', [
    { name: 'A', code: 'S1', qty: '1' },
    { name: 'B', code: 'S2', qty: '2' },
  ]);
  expect((await migrate(m.db, [item(fields('Int'))])).refused).toEqual([]);
  expect(
    (await m.db.schema.indexes(m.knex, 'tabMig Item')).get(indexName('tabMig Item', 'code'))?.unique,
  ).toBe(true);
  // The driver's error may come from another realm (jest): compared by its message, not by class.
  expect(
    await insertDocs(m.knex, 'tabMig Item', [{ name: 'C', code: 'S1', qty: 3 }]).then(
      () => 'stored',
      (e: { message?: string }) => String(e.message),
    ),
  ).toMatch(/UNIQUE|Duplicate/i);
  expect(await rowsOf(m.knex, 'tabMig Item', ['code', 'qty'])).toEqual([
    { name: 'A', code: 'S1', qty: 1 },
    { name: 'B', code: 'S2', qty: 2 },
  ]);
});

test('Data → Date and Datetime: text of the right shape naming no real day or time refuses the change', async () => {
  await migrate(m.db, [
    item([
      { fieldname: 'day', fieldtype: 'Data' },
      { fieldname: 'at', fieldtype: 'Data' },
    ]),
  ]);
  await insertDocs(m.knex, 'tabMig Item', [
    { name: 'A', day: '2024-02-29', at: '2024-02-29 23:59:59' },
    { name: 'B', day: '2023-02-29', at: '2024-01-01 24:00:00' },
    { name: 'C', day: '2024-13-01', at: '2024-04-31 10:00' },
    { name: 'D', day: '2024-04-30', at: '2024-01-01 10:60' },
    { name: 'E', day: '0000-01-01', at: '2000-02-29' },
  ]);
  const before = await rowsOf(m.knex, 'tabMig Item', ['day', 'at']);
  const columns = await m.db.schema.columns(m.knex, 'tabMig Item');
  const target = item([
    { fieldname: 'day', fieldtype: 'Date' },
    { fieldname: 'at', fieldtype: 'Datetime' },
    { fieldname: 'extra', fieldtype: 'Data' },
  ]);
  // The dry run says what the run does; neither changes anything (a new field planned beside it included).
  const dry = await migrate(m.db, [target], { dryRun: true });
  const result = await migrate(m.db, [target]);
  for (const r of [dry, result]) {
    expect(r.refused).toHaveLength(1);
    expect(r.refused[0]?.refusal).toMatch(/cannot change day .*: 3 rows hold .*\("B", "C", "E"\)/);
    expect(r.refused[0]?.refusal).toMatch(/cannot change at .*: 3 rows hold .*\("B", "C", "D"\)/);
  }
  expect(await rowsOf(m.knex, 'tabMig Item', ['day', 'at'])).toEqual(before);
  expect(await m.db.schema.columns(m.knex, 'tabMig Item')).toEqual(columns);
});
