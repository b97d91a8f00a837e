// A Single DocType: one document named after the DocType, read with its defaults before any save, updated in place.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });
const V1 = '/api/resource/Widget Settings/Widget Settings';
const V2 = '/api/v2/document/Widget Settings/Widget Settings';

test('before any save it reads as a document named after the DocType, with its defaults', async () => {
  const res = await t.http.get(V2).set(auth());
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({
    name: 'Widget Settings',
    doctype: 'Widget Settings',
    docstatus: 0,
    site_label: 'Widgets',
  });
});

test('an update stores the values sent and keeps the others; v1 and v2 read the same values', async () => {
  const first = await t.http.put(V1).set(auth()).send({ default_qty: '4', enabled: true });
  expect(first.status).toBe(200);
  expect(first.body.data).toMatchObject({ name: 'Widget Settings', default_qty: 4, enabled: 1 });
  const second = await t.http.put(V2).set(auth()).send({ site_label: 'Shop' });
  expect(second.status).toBe(200);
  for (const path of [V1, V2]) {
    const res = await t.http.get(path).set(auth());
    expect(res.body.data).toMatchObject({
      name: 'Widget Settings',
      site_label: 'Shop',
      default_qty: 4,
      enabled: 1,
    });
  }
  const rows = await t.site.db.knex('tabSingles').where({ doctype: 'Widget Settings', field: 'default_qty' });
  expect(rows.map((r: { value: string }) => String(r.value))).toEqual(['4']);
});

test('a bad value is refused and the stored values stay', async () => {
  const res = await t.http.put(V2).set(auth()).send({ default_qty: 'many' });
  expect(res.status).toBe(400);
  expect((await t.http.get(V2).set(auth())).body.data.default_qty).toBe(4);
});

test('it cannot be created through the collection or deleted', async () => {
  const before = (await t.http.get(V2).set(auth())).body.data;
  const create = await t.http
    .post('/api/v2/document/Widget Settings')
    .set(auth())
    .send({ site_label: 'second' });
  expect(create.status).toBeGreaterThanOrEqual(400);
  expect(create.status).toBeLessThan(500);
  const del = await t.http.delete(V2).set(auth());
  expect(del.status).toBeGreaterThanOrEqual(400);
  expect(del.status).toBeLessThan(500);
  expect((await t.http.get(V2).set(auth())).body.data).toEqual(before);
});

test('only System Manager may read or change it', async () => {
  const user = await createUser(t, 'single-reader@example.com', []);
  expect((await t.http.get(V2).set('Authorization', user)).status).toBe(403);
  expect((await t.http.put(V2).set('Authorization', user).send({ site_label: 'x' })).status).toBe(403);
  expect((await t.http.get(V2)).status).toBe(401);
});

test("a Single's child rows are stored under its name, read back, replaced whole, and kept when not sent", async () => {
  const path = '/api/v2/document/Vault Settings/Vault Settings';
  const put = await t.http
    .put(path)
    .set(auth())
    .send({ owner_label: 'ops', secrets: [{ label: 'a' }, { label: 'b', pin: 'single-pin-1' }] });
  expect(put.status).toBe(200);
  expect(put.body.data.secrets.map((r: { label: string }) => r.label)).toEqual(['a', 'b']);
  const rows = await t.site.db
    .knex('tabVault Secret')
    .where({ parent: 'Vault Settings', parenttype: 'Vault Settings' })
    .orderBy('idx');
  expect(rows.map((r: { label: string; pin: string | null }) => [r.label, r.pin])).toEqual([
    ['a', null],
    ['b', '*****'],
  ]);
  for (const p of [path, '/api/resource/Vault Settings/Vault Settings']) {
    const read = await t.http.get(p).set(auth());
    expect(read.status).toBe(200);
    expect(read.body.data.secrets.map((r: { label: string; idx: number }) => [r.label, r.idx])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    expect(JSON.stringify(read.body)).not.toContain('single-pin-1');
  }
  expect((await t.http.put(path).set(auth()).send({ owner_label: 'ops 2' })).status).toBe(200);
  expect((await t.http.get(path).set(auth())).body.data.secrets).toHaveLength(2);
  const replaced = await t.http
    .put(path)
    .set(auth())
    .send({ secrets: [{ label: 'c' }] });
  expect(replaced.status).toBe(200);
  expect(
    (await t.http.get(path).set(auth())).body.data.secrets.map((r: { label: string }) => r.label),
  ).toEqual(['c']);
  expect(await t.site.db.knex('tabVault Secret').where({ parent: 'Vault Settings' })).toHaveLength(1);
});

test('an update with a stale `modified` is refused (409), as for any document; concurrent ones let one through', async () => {
  const opened = await t.http.get(V2).set(auth());
  const { modified } = opened.body.data as { modified: string };
  const first = await t.http.put(V1).set(auth()).send({ site_label: 'First', modified });
  expect(first.status).toBe(200);
  const stale = await t.http.put(V1).set(auth()).send({ site_label: 'Stale', modified });
  expect(stale.status).toBe(409);
  expect(stale.body.exc_type).toBe('TimestampMismatchError');
  expect((await t.http.get(V2).set(auth())).body.data.site_label).toBe('First');
  const now = (await t.http.get(V2).set(auth())).body.data.modified as string;
  const racing = await Promise.all(
    [1, 2, 3, 4].map((i) =>
      t.http
        .patch(V2)
        .set(auth())
        .send({ site_label: `Race ${i}`, modified: now }),
    ),
  );
  expect(racing.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
});
