// Child rows: stored in order with idx 1..n; an update replaces the table (kept rows updated, new inserted, missing deleted).
import { countRows } from '../api/api-version';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

type Row = {
  name: string;
  part_name: string;
  qty: number;
  idx: number;
  parent: string;
  parentfield: string;
  parenttype: string;
};
const auth = () => ({ Authorization: t.adminToken });
const create = async (parts: object[]) =>
  (await t.http.post('/api/v2/document/Widget').set(auth()).send({ title: 'with rows', parts })).body.data;
const update = (name: string, body: object) =>
  t.http.put(`/api/v2/document/Widget/${name}`).set(auth()).send(body);
const read = async (name: string) =>
  (await t.http.get(`/api/v2/document/Widget/${name}`).set(auth())).body.data as { parts: Row[] };
const storedRows = (parent: string) =>
  t.site.db.knex('tabWidget Part').where({ parent }).orderBy('idx') as Promise<Row[]>;

test('rows round-trip in order with idx 1..n and the parent fields set', async () => {
  const doc = await create([
    { part_name: 'a', qty: 1 },
    { part_name: 'b', qty: 2 },
    { part_name: 'c', qty: 3 },
  ]);
  const { parts } = await read(doc.name);
  expect(parts.map((p) => [p.part_name, p.qty, p.idx])).toEqual([
    ['a', 1, 1],
    ['b', 2, 2],
    ['c', 3, 3],
  ]);
  for (const p of parts)
    expect(p).toMatchObject({
      parent: doc.name,
      parentfield: 'parts',
      parenttype: 'Widget',
      doctype: 'Widget Part',
    });
  expect(new Set(parts.map((p) => p.name)).size).toBe(3);
  expect(parts).toEqual(doc.parts);
});

test('an update without the table field leaves the rows alone', async () => {
  const doc = await create([{ part_name: 'a' }, { part_name: 'b' }]);
  expect((await update(doc.name, { qty: 4 })).status).toBe(200);
  expect((await read(doc.name)).parts).toEqual(
    doc.parts.map((p: Row) => ({ ...p, modified: expect.any(String) })),
  );
});

test('an update replaces the table: known names updated, new rows inserted, left-out rows deleted, idx renumbered', async () => {
  const doc = await create([{ part_name: 'a' }, { part_name: 'b' }, { part_name: 'c' }]);
  const [a, b, c] = doc.parts as Row[];
  const res = await update(doc.name, {
    parts: [
      { name: c!.name, part_name: 'c2', qty: 30 },
      { part_name: 'new' },
      { name: a!.name, part_name: 'a' },
    ],
  });
  expect(res.status).toBe(200);
  const rows = await storedRows(doc.name);
  expect(rows.map((r) => [r.part_name, Number(r.idx)])).toEqual([
    ['c2', 1],
    ['new', 2],
    ['a', 3],
  ]);
  expect(rows[0]!.name).toBe(c!.name);
  expect(rows[2]!.name).toBe(a!.name);
  expect(rows.map((r) => r.name)).not.toContain(b!.name);
  expect(await countRows(t, 'Widget Part', { name: b!.name })).toBe(0);
  expect((await read(doc.name)).parts.map((p) => p.part_name)).toEqual(['c2', 'new', 'a']);
});

test('an empty list deletes every row', async () => {
  const doc = await create([{ part_name: 'a' }, { part_name: 'b' }]);
  expect((await update(doc.name, { parts: [] })).status).toBe(200);
  expect(await storedRows(doc.name)).toEqual([]);
});

test("a row named after another document's row is a new row; the other document keeps its row", async () => {
  const other = await create([{ part_name: 'theirs' }]);
  const mine = await create([]);
  const theirRow = (other.parts as Row[])[0]!;
  const res = await update(mine.name, { parts: [{ name: theirRow.name, part_name: 'stolen' }] });
  expect(res.status === 200 || res.status === 409).toBe(true);
  expect((await storedRows(other.name)).map((r) => [r.name, r.part_name])).toEqual([
    [theirRow.name, 'theirs'],
  ]);
});

test('parent, parenttype and parentfield in a body row are ignored (security.md #36)', async () => {
  const victim = await create([{ part_name: 'victim row' }]);
  const doc = await create([]);
  const res = await update(doc.name, {
    parts: [{ part_name: 'forged', parent: victim.name, parenttype: 'User', parentfield: 'roles' }],
  });
  expect(res.status).toBe(200);
  const rows = await storedRows(doc.name);
  expect(rows.map((r) => [r.part_name, r.parent, r.parenttype, r.parentfield])).toEqual([
    ['forged', doc.name, 'Widget', 'parts'],
  ]);
  expect((await storedRows(victim.name)).map((r) => r.part_name)).toEqual(['victim row']);
  expect(await countRows(t, 'Widget Part', { parenttype: 'User' })).toBe(0);
});

test('deleting the parent deletes its rows only', async () => {
  const keep = await create([{ part_name: 'keep' }]);
  const doc = await create([{ part_name: 'x' }, { part_name: 'y' }]);
  expect((await t.http.delete(`/api/v2/document/Widget/${doc.name}`).set(auth())).status).toBe(202);
  expect(await storedRows(doc.name)).toEqual([]);
  expect(await storedRows(keep.name)).toHaveLength(1);
});

test('a kept row keeps its creation, whether the body leaves it out or sends another', async () => {
  const doc = await create([{ part_name: 'a' }, { part_name: 'b' }]);
  const before = await storedRows(doc.name);
  await new Promise((r) => setTimeout(r, 20));
  const rows = (await read(doc.name)).parts;
  const res = await update(doc.name, {
    parts: [
      { name: rows[0]?.name, part_name: 'a2' },
      { name: rows[1]?.name, part_name: 'b', creation: '2001-01-01 00:00:00' },
    ],
  });
  expect(res.status).toBe(200);
  const after = (await storedRows(doc.name)) as (Row & { creation: string })[];
  expect(after.map((r) => r.creation)).toEqual(before.map((r) => (r as Row & { creation: string }).creation));
});
