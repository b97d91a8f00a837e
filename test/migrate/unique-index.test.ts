// `unique` on fields that are not Data (Int, Float, Currency, Date, Datetime, Time, Link, Select, Check, ...), as
// Frappe: a unique index on every field type with a column but the Text-like long ones. Added unless a value is held
// twice (refused naming the field, the count and the values, the table untouched), dropped when the flag goes.
import { createHash } from 'node:crypto';
import { migrate } from '../../runtime/db/migrate';
import { indexName } from '../../runtime/db/table-columns';
import { insertDocs, metaOf, openMigrateDb, type MigrateDb } from './migrate-db';

let m: MigrateDb;
beforeEach(async () => {
  m = await openMigrateDb();
});
afterEach(async () => {
  await m.close();
});

const TABLE = 'tabMig Uniq';
const INDEX = indexName(TABLE, 'f');
const uniq = (fields: Record<string, unknown>[]) => metaOf({ name: 'Mig Uniq', fields });

/** The table's columns and indexes, and a checksum of its rows. */
async function snapshot() {
  const rows = await m.knex(TABLE).select().orderBy('name');
  return {
    columns: [...(await m.db.schema.columns(m.knex, TABLE))],
    indexes: [...(await m.db.schema.indexes(m.knex, TABLE))].sort(),
    rows: createHash('sha1').update(JSON.stringify(rows)).digest('hex'),
  };
}

/** Whether inserting `value` into the column again is refused by the database. */
async function refusedAgain(name: string, value: unknown): Promise<boolean> {
  return insertDocs(m.knex, TABLE, [{ name, f: value }]).then(
    () => false,
    // The driver's error may come from another realm (jest): told by its message, not by class.
    (e: { message?: string }) => {
      if (!/UNIQUE|Duplicate|unique constraint/i.test(String(e.message))) throw e;
      return true;
    },
  );
}

// Per field type: [fieldtype, options, the value held twice, another value]. The value the refusal names is compared
// as the database prints it back (a Date may come back with a time on one driver, a decimal with trailing zeros).
const TYPES: [string, string | undefined, string | number, string | number][] = [
  ['Int', undefined, 7, 8],
  ['Long Int', undefined, 9_007_199_254, 9_007_199_255],
  ['Float', undefined, 2.5, 3.25],
  ['Currency', undefined, 10.75, 11],
  ['Percent', undefined, 12.5, 50],
  ['Rating', undefined, 0.6, 0.8],
  ['Duration', undefined, 3600, 60],
  ['Check', undefined, 1, 0],
  ['Date', undefined, '2026-01-05', '2026-01-06'],
  ['Datetime', undefined, '2026-01-05 10:30:00', '2026-01-05 10:31:00'],
  ['Time', undefined, '10:30:00', '11:00:00'],
  ['Link', 'Mig Uniq', 'TARGET-1', 'TARGET-2'],
  ['Select', 'Low\nHigh', 'Low', 'High'],
];

const sameValue = (shown: string, value: string | number) =>
  typeof value === 'number' ? Number(shown) === value : shown.startsWith(value);

test.each(TYPES)(
  'unique on a %s field: refused over duplicates naming them, made without, dropped with the flag',
  async (fieldtype, options, twice, other) => {
    const field = { fieldname: 'f', fieldtype, ...(options ? { options } : {}) };
    await migrate(m.db, [uniq([field])]);
    await insertDocs(m.knex, TABLE, [
      { name: 'A', f: twice },
      { name: 'B', f: twice },
      { name: 'C', f: other },
    ]);
    const before = await snapshot();

    const refused = await migrate(m.db, [uniq([{ ...field, unique: 1 }])]);
    expect(refused.plan.map((c) => `${c.kind}:${c.field}`)).toEqual(['add_index:f']);
    expect(refused.refused).toHaveLength(1);
    const shown =
      /^Mig Uniq: cannot make f unique: 1 value is held by more than one document \("(.*)"\)$/.exec(
        refused.refused[0]!.refusal!,
      );
    expect([refused.refused[0]!.refusal, shown && sameValue(shown[1]!, twice)]).toEqual([
      expect.any(String),
      true,
    ]);
    expect(await snapshot()).toEqual(before);

    await m.knex(TABLE).where({ name: 'B' }).delete();
    const made = await migrate(m.db, [uniq([{ ...field, unique: 1 }])]);
    expect(made.refused).toEqual([]);
    expect(made.plan.map((c) => `${c.kind}:${c.field}`)).toEqual(['add_index:f']);
    expect((await m.db.schema.indexes(m.knex, TABLE)).get(INDEX)?.unique).toBe(true);
    expect(await refusedAgain('D', twice)).toBe(true);
    // Nothing is pending afterwards: the live index matches the field.
    expect((await migrate(m.db, [uniq([{ ...field, unique: 1 }])], { full: true })).plan).toEqual([]);

    const dropped = await migrate(m.db, [uniq([field])]);
    expect(dropped.plan.map((c) => `${c.kind}:${c.field}`)).toEqual(['drop_index:f']);
    expect((await m.db.schema.indexes(m.knex, TABLE)).has(INDEX)).toBe(false);
    expect(await refusedAgain('D', twice)).toBe(false);
  },
);

test('a unique table made at once holds the index of a non-Data field', async () => {
  await migrate(m.db, [uniq([{ fieldname: 'f', fieldtype: 'Int', unique: 1 }])]);
  expect((await m.db.schema.indexes(m.knex, TABLE)).get(INDEX)?.unique).toBe(true);
  await insertDocs(m.knex, TABLE, [{ name: 'A', f: 1 }]);
  expect(await refusedAgain('B', 1)).toBe(true);
});

test.each(['Small Text', 'Text', 'Long Text', 'Code', 'JSON'])(
  'unique on a %s field makes no index (Text-like long types, as Frappe)',
  async (fieldtype) => {
    await migrate(m.db, [uniq([{ fieldname: 'f', fieldtype }])]);
    const result = await migrate(m.db, [uniq([{ fieldname: 'f', fieldtype, unique: 1 }])], { full: true });
    expect(result.plan).toEqual([]);
    expect((await m.db.schema.indexes(m.knex, TABLE)).has(INDEX)).toBe(false);
  },
);

test('a new unique Int field on a table of two rows is refused: both would hold 0; on one row it is made', async () => {
  await migrate(m.db, [uniq([{ fieldname: 'code', fieldtype: 'Data' }])]);
  await insertDocs(m.knex, TABLE, [{ name: 'A' }, { name: 'B' }]);
  const before = await snapshot();
  const next = uniq([
    { fieldname: 'code', fieldtype: 'Data' },
    { fieldname: 'f', fieldtype: 'Int', unique: 1 },
  ]);
  const refused = await migrate(m.db, [next]);
  expect(refused.refused.map((c) => c.refusal)).toEqual([
    'Mig Uniq: cannot make new field f unique: its default "0" would be held by all 2 rows',
  ]);
  expect(await snapshot()).toEqual(before);
  await m.knex(TABLE).where({ name: 'B' }).delete();
  const made = await migrate(m.db, [next]);
  expect(made.refused).toEqual([]);
  expect((await m.db.schema.indexes(m.knex, TABLE)).get(INDEX)?.unique).toBe(true);
  expect((await m.knex(TABLE).select('f')) as unknown[]).toEqual([{ f: 0 }]);
});

test('a unique Int field that becomes Small Text loses its index; back to Int, it is made again', async () => {
  await migrate(m.db, [uniq([{ fieldname: 'f', fieldtype: 'Int', unique: 1 }])]);
  await insertDocs(m.knex, TABLE, [
    { name: 'A', f: 1 },
    { name: 'B', f: 2 },
  ]);
  const text = await migrate(m.db, [uniq([{ fieldname: 'f', fieldtype: 'Small Text', unique: 1 }])]);
  expect(text.refused).toEqual([]);
  expect(text.plan.map((c) => `${c.kind}:${c.field}`)).toEqual(['drop_index:f', 'change_type:f']);
  expect((await m.db.schema.indexes(m.knex, TABLE)).has(INDEX)).toBe(false);
  const back = await migrate(m.db, [uniq([{ fieldname: 'f', fieldtype: 'Int', unique: 1 }])]);
  expect(back.refused).toEqual([]);
  expect(back.plan.map((c) => `${c.kind}:${c.field}`)).toEqual(['change_type:f', 'add_index:f']);
  expect((await m.db.schema.indexes(m.knex, TABLE)).get(INDEX)?.unique).toBe(true);
  expect(await refusedAgain('C', 2)).toBe(true);
});
