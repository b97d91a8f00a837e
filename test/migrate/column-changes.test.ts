// New fields, indexes, removed fields, Select options, naming and orphan tables on a table holding documents, and a
// dry run that changes nothing.
import { createHash } from 'node:crypto';
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

const TABLE = 'tabMig Thing';
const thing = (fields: Record<string, unknown>[], extra: Record<string, unknown> = {}) =>
  metaOf({ name: 'Mig Thing', fields, ...extra });
const CODE = { fieldname: 'code', fieldtype: 'Data' };

async function seed(fields: Record<string, unknown>[], docs: Record<string, unknown>[], extra = {}) {
  await migrate(m.db, [thing(fields, extra)]);
  await insertDocs(m.knex, TABLE, docs);
}

/** The table's columns and indexes, and a checksum of its rows. */
async function snapshot() {
  const rows = await m.knex(TABLE).select().orderBy('name');
  return {
    columns: [...(await m.db.schema.columns(m.knex, TABLE))],
    indexes: [...(await m.db.schema.indexes(m.knex, TABLE)).keys()].sort(),
    tables: [...(await m.db.schema.tables(m.knex))].sort(),
    rows: createHash('sha1').update(JSON.stringify(rows)).digest('hex'),
  };
}

test('a new reqd field with a default fills the existing rows (Int, Data, Check, Text)', async () => {
  await seed([CODE], [{ name: 'A' }, { name: 'B' }]);
  const result = await migrate(m.db, [
    thing([
      CODE,
      { fieldname: 'qty', fieldtype: 'Int', reqd: 1, default: '3' },
      { fieldname: 'state', fieldtype: 'Data', reqd: 1, default: 'Open' },
      { fieldname: 'flag', fieldtype: 'Check', default: '1' },
      { fieldname: 'note', fieldtype: 'Small Text', reqd: 1, default: 'n/a' },
    ]),
  ]);
  expect(result.refused).toEqual([]);
  expect(result.plan.map((c) => `${c.kind}:${c.field}`)).toEqual([
    'add_column:qty',
    'add_column:state',
    'add_column:flag',
    'add_column:note',
  ]);
  expect(await rowsOf(m.knex, TABLE, ['qty', 'state', 'flag', 'note'])).toEqual([
    { name: 'A', qty: 3, state: 'Open', flag: 1, note: 'n/a' },
    { name: 'B', qty: 3, state: 'Open', flag: 1, note: 'n/a' },
  ]);
});

test('a new number field without a default: the plan says the 0 the existing rows get', async () => {
  await seed([CODE], [{ name: 'A' }]);
  const result = await migrate(m.db, [thing([CODE, { fieldname: 'count', fieldtype: 'Int' }])]);
  expect(result.plan[0]?.detail).toMatch(/^count \w+ default 0$/);
  expect(await rowsOf(m.knex, TABLE, ['count'])).toEqual([{ name: 'A', count: 0 }]);
});

test('a changed default is the column default from then on; stored rows keep their values', async () => {
  const fields = (state: string, qty: string | undefined) => [
    CODE,
    { fieldname: 'state', fieldtype: 'Data', default: state },
    { fieldname: 'qty', fieldtype: 'Int', ...(qty === undefined ? {} : { default: qty }) },
  ];
  await seed(fields('dflt', '3'), [{ name: 'A' }]);
  const dry = await migrate(m.db, [thing(fields('d2', undefined))], { dryRun: true });
  expect(dry.plan.map((c) => [c.kind, c.detail])).toEqual([
    ['change_default', 'state default d2, qty default 0'],
  ]);
  const result = await migrate(m.db, [thing(fields('d2', undefined))]);
  expect(result.refused).toEqual([]);
  expect(result.changed).toEqual(['Mig Thing']);
  // A row written without the columns (a patch's SQL) gets the new defaults; the stored row keeps its values.
  await insertDocs(m.knex, TABLE, [{ name: 'B' }]);
  expect(await rowsOf(m.knex, TABLE, ['state', 'qty'])).toEqual([
    { name: 'A', state: 'dflt', qty: 3 },
    { name: 'B', state: 'd2', qty: 0 },
  ]);
  expect((await migrate(m.db, [thing(fields('d2', undefined))], { full: true })).plan).toEqual([]);
});

test('unique added over duplicates is refused naming the values; without them the index is made', async () => {
  await seed(
    [CODE],
    [
      { name: 'A', code: 'S1' },
      { name: 'B', code: 'S1' },
      { name: 'C', code: 'S2' },
      { name: 'D', code: 'S2' },
      { name: 'E', code: 'S3' },
    ],
  );
  const before = await snapshot();
  const refused = await migrate(m.db, [thing([{ ...CODE, unique: 1 }])]);
  expect(refused.refused.map((c) => c.refusal)).toEqual([
    'Mig Thing: cannot make code unique: 2 values are held by more than one document ("S1", "S2")',
  ]);
  expect(await snapshot()).toEqual(before);
  await m.knex(TABLE).whereIn('name', ['B', 'D']).update({ code: null });
  const made = await migrate(m.db, [thing([{ ...CODE, unique: 1 }])]);
  expect(made.refused).toEqual([]);
  expect((await m.db.schema.indexes(m.knex, TABLE)).get(indexName(TABLE, 'code'))?.unique).toBe(true);
  // The driver's error may come from another realm (jest): compared by its message, not by class.
  expect(
    await insertDocs(m.knex, TABLE, [{ name: 'F', code: 'S1' }]).then(
      () => 'stored',
      (e: { message?: string }) => String(e.message),
    ),
  ).toMatch(/UNIQUE|Duplicate/i);
});

test('unique or search_index removed drops the index: a repeated value is stored again', async () => {
  await seed(
    [
      { ...CODE, unique: 1 },
      { fieldname: 'city', fieldtype: 'Data', search_index: 1 },
    ],
    [{ name: 'A', code: 'S1' }],
  );
  const result = await migrate(m.db, [thing([CODE, { fieldname: 'city', fieldtype: 'Data' }])]);
  expect(result.plan.map((c) => `${c.kind}:${c.field}`).sort()).toEqual([
    'drop_index:city',
    'drop_index:code',
  ]);
  const indexes = await m.db.schema.indexes(m.knex, TABLE);
  expect(indexes.has(indexName(TABLE, 'code'))).toBe(false);
  expect(indexes.has(indexName(TABLE, 'city'))).toBe(false);
  await insertDocs(m.knex, TABLE, [{ name: 'B', code: 'S1' }]);
  expect(await m.knex(TABLE).where({ code: 'S1' }).count({ n: '*' })).toEqual([{ n: 2 }]);
});

test('a removed field keeps its column and data; --drop-removed drops it', async () => {
  await seed(
    [CODE, { fieldname: 'old', fieldtype: 'Data', search_index: 1 }],
    [{ name: 'A', code: 'x', old: 'keep me' }],
  );
  await insertDocs(m.knex, TABLE, [
    { name: 'B', code: 'y', old: '' },
    { name: 'C', code: 'z' },
  ]);
  const kept = await migrate(m.db, [thing([CODE])], { full: true });
  expect(kept.plan.map((c) => c.kind)).toEqual(['drop_index', 'removed_field']);
  expect(kept.plan[1]!.warnings).toEqual([
    '1 row holds a value in old (kept; --drop-removed would destroy it)',
  ]);
  expect(await rowsOf(m.knex, TABLE, ['old'])).toEqual([
    { name: 'A', old: 'keep me' },
    { name: 'B', old: '' },
    { name: 'C', old: null },
  ]);
  const dry = await migrate(m.db, [thing([CODE])], { full: true, dropRemoved: true, dryRun: true });
  expect(dry.plan).toMatchObject([
    { kind: 'drop_column', warnings: ['1 row holds a value in old: dropping the column destroys it'] },
  ]);
  const dropped = await migrate(m.db, [thing([CODE])], { full: true, dropRemoved: true });
  expect(dropped.plan.map((c) => c.kind)).toEqual(['drop_column']);
  expect((await m.db.schema.columns(m.knex, TABLE)).has('old')).toBe(false);
  expect(await rowsOf(m.knex, TABLE, ['code'])).toEqual([
    { name: 'A', code: 'x' },
    { name: 'B', code: 'y' },
    { name: 'C', code: 'z' },
  ]);
});

test('a field made mandatory warns with the count of rows without a value, and changes none', async () => {
  const due = { fieldname: 'due', fieldtype: 'Date' };
  const note = { fieldname: 'note', fieldtype: 'Small Text' };
  await seed(
    [CODE, due, note],
    [
      { name: 'A', code: 'x', due: '2026-01-02', note: 'n' },
      { name: 'B', code: 'y', note: '' },
      { name: 'C', code: 'z', due: '2026-01-03' },
    ],
  );
  const before = await snapshot();
  const stored = await rowsOf(m.knex, TABLE, ['code', 'due', 'note']);
  expect(stored.map((row) => row.note)).toEqual(['n', '', null]);
  const next = thing([
    { ...CODE, reqd: 1 },
    { ...due, reqd: 1 },
    { ...note, reqd: 1 },
    { fieldname: 'added', fieldtype: 'Data', reqd: 1 },
    { fieldname: 'flag', fieldtype: 'Check', reqd: 1 },
  ]);
  const dry = await migrate(m.db, [next], { dryRun: true });
  const mandatory = dry.plan.filter((c) => c.kind === 'mandatory');
  expect(mandatory.map((c) => [c.field, c.warnings])).toEqual([
    ['code', []],
    ['due', ['1 row holds no value in due (kept; the next save of each must set it)']],
    ['note', ['2 rows hold no value in note (kept; the next save of each must set it)']],
    ['added', ['3 rows hold no value in added (kept; the next save of each must set it)']],
  ]);
  expect(mandatory.every((c) => c.statements.length === 0 && c.refusal === undefined)).toBe(true);
  expect(await snapshot()).toEqual(before);
  const applied = await migrate(m.db, [next]);
  expect(applied.refused).toEqual([]);
  expect(await rowsOf(m.knex, TABLE, ['code', 'due', 'note'])).toEqual(stored);
  // Recorded: the next plan of the same DocType warns no more.
  const again = await migrate(m.db, [next], { full: true, dryRun: true });
  expect(again.plan.filter((c) => c.kind === 'mandatory')).toEqual([]);
});

test('a mandatory count looks at the column before the edit, and at what a new column gives every row', async () => {
  await seed(
    [{ fieldname: 'code', fieldtype: 'Data' }],
    [
      { name: 'A', code: '1' },
      { name: 'B', code: '' },
      { name: 'C', code: '4' },
    ],
  );
  // Data→Int and mandatory in one edit: the empty text becomes NULL, so it counts. A new Int or Currency column
  // without a default holds 0 in every row: no row lacks a value.
  const next = thing([
    { fieldname: 'code', fieldtype: 'Int', reqd: 1 },
    { fieldname: 'cnt', fieldtype: 'Int', reqd: 1 },
    { fieldname: 'amt', fieldtype: 'Currency', reqd: 1 },
  ]);
  const dry = await migrate(m.db, [next], { dryRun: true });
  expect(dry.plan.filter((c) => c.kind === 'mandatory').map((c) => [c.field, c.warnings])).toEqual([
    ['code', ['1 row holds no value in code (kept; the next save of each must set it)']],
  ]);
  expect((await migrate(m.db, [next])).refused).toEqual([]);
  expect(await rowsOf(m.knex, TABLE, ['code', 'cnt'])).toEqual([
    { name: 'A', code: 1, cnt: 0 },
    { name: 'B', code: null, cnt: 0 },
    { name: 'C', code: 4, cnt: 0 },
  ]);
});

test('changed Select options warn with the count of stored values outside them', async () => {
  const status = (options: string) => ({ fieldname: 'status', fieldtype: 'Select', options });
  await seed(
    [status('Draft\nActive\nRetired')],
    [
      { name: 'A', status: 'Draft' },
      { name: 'B', status: 'Retired' },
      { name: 'C', status: 'Retired' },
    ],
  );
  const result = await migrate(m.db, [thing([status('Draft\nActive')])]);
  expect(result.plan).toHaveLength(1);
  expect(result.plan[0]).toMatchObject({
    kind: 'select_options',
    field: 'status',
    warnings: ['2 stored values are outside the new options of status (kept, still readable)'],
  });
  expect(await rowsOf(m.knex, TABLE, ['status'])).toEqual([
    { name: 'A', status: 'Draft' },
    { name: 'B', status: 'Retired' },
    { name: 'C', status: 'Retired' },
  ]);
});

test('naming changed to autoincrement is refused on a table with rows', async () => {
  await seed([CODE], [{ name: 'abc123' }]);
  const result = await migrate(m.db, [thing([CODE], { autoname: 'autoincrement' })]);
  expect(result.refused.map((c) => c.refusal)).toEqual([
    'Mig Thing: cannot change naming to autoincrement: the table holds 1 row',
  ]);
  await m.knex(TABLE).delete();
  expect((await migrate(m.db, [thing([CODE], { autoname: 'autoincrement' })])).refused).toEqual([]);
});

test('a table with rows that no DocType owns is a warning naming it and its rows', async () => {
  await seed([CODE], [{ name: 'A' }, { name: 'B' }]);
  const other = metaOf({ name: 'Mig Other', fields: [CODE] });
  const result = await migrate(m.db, [other], { full: true });
  expect(result.plan.find((c) => c.kind === 'orphan_table')).toMatchObject({
    doctype: TABLE,
    warnings: [`table ${TABLE} holds 2 rows and belongs to no DocType`],
  });
  expect(await m.knex(TABLE).count({ n: '*' })).toEqual([{ n: 2 }]);
});

test('a DocType made Single leaves its table and rows to no DocType: a warning naming them', async () => {
  await seed([CODE], [{ name: 'A' }, { name: 'B' }, { name: 'C' }]);
  const dry = await migrate(m.db, [thing([CODE], { issingle: 1 })], { dryRun: true });
  expect(dry.plan.find((c) => c.kind === 'orphan_table')).toMatchObject({
    doctype: TABLE,
    warnings: [`table ${TABLE} holds 3 rows and belongs to no DocType`],
  });
  await migrate(m.db, [thing([CODE], { issingle: 1 })]);
  expect(await m.knex(TABLE).count({ n: '*' })).toEqual([{ n: 3 }]);
});

test('a DocType made a child table gains parent, parentfield and parenttype; its rows are a warning', async () => {
  await seed([CODE], [{ name: 'A', code: 'a' }, { name: 'B' }]);
  const child = thing([CODE], { istable: 1 });
  const dry = await migrate(m.db, [child], { dryRun: true });
  expect(dry.refused).toEqual([]);
  expect(dry.plan.map((c) => `${c.kind}:${c.field}`)).toEqual([
    'add_column:parent',
    'add_column:parentfield',
    'add_column:parenttype',
    'add_index:parent',
  ]);
  expect(dry.plan[2]?.warnings).toEqual([
    '2 rows of Mig Thing belong to no parent document now that it is a child table (kept; no document lists them)',
  ]);
  const result = await migrate(m.db, [child]);
  expect(result.refused).toEqual([]);
  const columns = await m.db.schema.columns(m.knex, TABLE);
  for (const c of ['parent', 'parentfield', 'parenttype']) expect(columns.has(c)).toBe(true);
  expect(await rowsOf(m.knex, TABLE, ['code', 'parent'])).toEqual([
    { name: 'A', code: 'a', parent: null },
    { name: 'B', code: null, parent: null },
  ]);
  expect((await migrate(m.db, [child])).plan).toEqual([]);
});

test('a dry run plans every kind of change and changes nothing', async () => {
  await seed(
    [CODE, { fieldname: 'qty', fieldtype: 'Data' }, { fieldname: 'old', fieldtype: 'Data' }],
    [
      { name: 'A', code: 'S1', qty: '12' },
      { name: 'B', code: 'S2', qty: '7' },
    ],
  );
  const before = await snapshot();
  const next = thing([
    { ...CODE, unique: 1 },
    { fieldname: 'qty', fieldtype: 'Int' },
    { fieldname: 'added', fieldtype: 'Int', default: '5' },
  ]);
  const dry = await migrate(m.db, [next, metaOf({ name: 'Mig New', fields: [CODE] })], {
    dryRun: true,
    full: true,
    dropRemoved: true,
  });
  expect(dry.plan.map((c) => c.kind).sort()).toEqual(
    ['add_column', 'add_index', 'change_type', 'create_table', 'drop_column'].sort(),
  );
  expect(dry.plan.every((c) => c.statements.length > 0)).toBe(true);
  // No empty qty: no UPDATE before the conversion.
  expect(dry.plan.find((c) => c.kind === 'change_type')!.statements.some((s) => /^update/i.test(s))).toBe(
    false,
  );
  expect(await snapshot()).toEqual(before);
  const history = await m.knex('__SchemaMigration').count({ n: '*' });
  const applied = await migrate(m.db, [next], { dropRemoved: true });
  expect(applied.refused).toEqual([]);
  expect(Number((await m.knex('__SchemaMigration').count({ n: '*' }))[0]!.n)).toBe(Number(history[0]!.n) + 4);
});
