// A DocType change that fails part-way. Every failure the checks can foresee refuses the change before the first DDL
// statement (here: a new unique field whose default every existing row would hold). One they cannot (on MariaDB, a
// column another table's foreign key points at, which MODIFY refuses) fails after DDL began where DDL commits as it
// runs: what ran stays, the failure is recorded in __SchemaMigration and named in the refusal, no schema hash is kept,
// and the next migration plans only what is left and finishes it.
import { createHash } from 'node:crypto';
import { migrate } from '../../runtime/db/migrate';
import { insertDocs, metaOf, openMigrateDb, rowsOf, type MigrateDb } from './migrate-db';

let m: MigrateDb;
beforeEach(async () => {
  m = await openMigrateDb();
});
afterEach(async () => {
  await m.close();
});

const TABLE = 'tabMig Part';
const part = (fields: Record<string, unknown>[]) => metaOf({ name: 'Mig Part', fields });
const mariadb = process.env.TEST_MYSQL_URL ? test : test.skip;

async function snapshot() {
  const rows = await m.knex(TABLE).select().orderBy('name');
  return {
    columns: [...(await m.db.schema.columns(m.knex, TABLE))],
    indexes: [...(await m.db.schema.indexes(m.knex, TABLE)).keys()].sort(),
    rows: createHash('sha1').update(JSON.stringify(rows)).digest('hex'),
  };
}

test('a new unique field with a default on a table of two rows is refused before any DDL', async () => {
  await migrate(m.db, [part([{ fieldname: 'qty', fieldtype: 'Data' }])]);
  await insertDocs(m.knex, TABLE, [{ name: 'P1' }, { name: 'P2' }]);
  const before = await snapshot();
  const result = await migrate(m.db, [
    part([
      { fieldname: 'qty', fieldtype: 'Data' },
      { fieldname: 'note', fieldtype: 'Data' },
      { fieldname: 'code', fieldtype: 'Data', unique: 1, default: 'X' },
    ]),
  ]);
  expect(result.refused.map((c) => c.refusal)).toEqual([
    'Mig Part: cannot make new field code unique: its default "X" would be held by all 2 rows',
  ]);
  expect(result.changed).toEqual([]);
  // Nothing of the DocType changed: not even the column of the other new field.
  expect(await snapshot()).toEqual(before);
  // A single row may hold it.
  await m.knex(TABLE).where({ name: 'P2' }).delete();
  const one = await migrate(m.db, [
    part([
      { fieldname: 'qty', fieldtype: 'Data' },
      { fieldname: 'code', fieldtype: 'Data', unique: 1, default: 'X' },
    ]),
  ]);
  expect(one.refused).toEqual([]);
  expect(await rowsOf(m.knex, TABLE, ['code'])).toEqual([{ name: 'P1', code: 'X' }]);
});

test('a unique index on a long Data field is added with the other changes (MariaDB cannot build it online)', async () => {
  const long = { fieldname: 'code', fieldtype: 'Data', length: 1000 };
  await migrate(m.db, [part([{ fieldname: 'qty', fieldtype: 'Data' }, long])]);
  await insertDocs(m.knex, TABLE, [
    { name: 'P1', code: 'a'.repeat(900) },
    { name: 'P2', code: 'b'.repeat(900) },
  ]);
  const result = await migrate(m.db, [
    part([
      { fieldname: 'qty', fieldtype: 'Data' },
      { ...long, unique: 1 },
      { fieldname: 'note', fieldtype: 'Data' },
    ]),
  ]);
  expect(result.refused).toEqual([]);
  expect(result.plan.map((c) => c.kind)).toEqual(['add_column', 'add_index']);
  const indexes = await m.db.schema.indexes(m.knex, TABLE);
  expect(indexes.get('idx_tabMig_Part_code')?.unique).toBe(true);
  // By message: the driver's error class may come from another test file's realm (jest), where toThrow misses it.
  await expect(insertDocs(m.knex, TABLE, [{ name: 'P3', code: 'a'.repeat(900) }])).rejects.toHaveProperty(
    'message',
    expect.stringMatching(/unique|duplicate/i),
  );
});

mariadb('a change that fails after DDL began is recorded, named, and finished by the next run', async () => {
  await migrate(m.db, [part([{ fieldname: 'qty', fieldtype: 'Data' }])]);
  await insertDocs(m.knex, TABLE, [
    { name: 'P1', qty: '1' },
    { name: 'P2', qty: '2' },
  ]);
  // A foreign key on `qty` (to a table of the same column): the server refuses to change that column's type.
  await m.knex.raw('create table mig_part_ref as select qty from ??', [TABLE]);
  await m.knex.raw('alter table mig_part_ref add primary key (qty)');
  await m.knex.raw(
    'alter table ?? add constraint mig_part_qty foreign key (qty) references mig_part_ref (qty)',
    [TABLE],
  );
  const hash = async () =>
    ((await m.knex('__DocTypeSchema').where({ doctype: 'Mig Part' }).first('hash')) as { hash: string }).hash;
  const hashBefore = await hash();

  const v2 = part([
    { fieldname: 'qty', fieldtype: 'Int' },
    { fieldname: 'note', fieldtype: 'Data' },
  ]);
  const failed = await migrate(m.db, [v2]);
  expect(failed.plan.map((c) => c.kind)).toEqual(['add_column', 'change_type']);
  expect(failed.refused).toHaveLength(1);
  expect(failed.refused[0]!.refusal).toMatch(
    /^Mig Part: change_type \(qty: varchar\(140\) → int\) failed after 1 of 2 statements had run: .*foreign key.*; the table is partly changed \(recorded in __SchemaMigration\); the next migration plans what is left and finishes it$/i,
  );
  // The column added stays; the type is as it was; the hash is not recorded.
  const columns = await m.db.schema.columns(m.knex, TABLE);
  expect([columns.get('note'), columns.get('qty')]).toEqual(['varchar(140)', 'varchar(140)']);
  expect(await hash()).toBe(hashBefore);
  const history = (await m
    .knex('__SchemaMigration')
    .where({ doctype: 'Mig Part' })
    .orderBy('id')
    .select('kind', 'detail', 'statements')) as { kind: string; detail: string; statements: string }[];
  expect(history.map((h) => h.kind)).toEqual(['create_table', 'add_column', 'failed']);
  expect(history[2]!.detail).toMatch(/^change_type qty: varchar\(140\) → int: .*foreign key/i);
  expect(JSON.parse(history[2]!.statements)).toEqual([]);

  // The cause gone, the next run plans only what is left and finishes it.
  await m.knex.raw('alter table ?? drop foreign key mig_part_qty', [TABLE]);
  await m.knex.raw('drop table mig_part_ref');
  const resumed = await migrate(m.db, [v2]);
  expect(resumed.refused).toEqual([]);
  expect(resumed.plan.map((c) => c.kind)).toEqual(['change_type']);
  expect(resumed.changed).toEqual(['Mig Part']);
  expect(await rowsOf(m.knex, TABLE, ['qty', 'note'])).toEqual([
    { name: 'P1', qty: 1, note: null },
    { name: 'P2', qty: 2, note: null },
  ]);
  expect(await hash()).not.toBe(hashBefore);
  expect((await migrate(m.db, [v2])).plan).toEqual([]);
});
