// Lists and counts answer the database as it is now: a page or count remembered on SQLite (until PRAGMA data_version
// moves) is never served after a create, an update or a delete, through the API or on another connection.
import { createUser } from '../helpers/test-site';
import { PATHS, query, seededSite, type Seeded } from './query-site';

let s: Seeded;
beforeAll(async () => {
  s = await seededSite();
});
afterAll(() => s.t.close());

const OPEN = { filters: { status: 'Open' }, fields: ['name', 'title'], order_by: 'title asc' };
const listOpen = async (version: 'v1' | 'v2') => {
  const res = await s.t.http.get(PATHS[version]).query(query(OPEN)).set('Authorization', s.t.adminToken);
  expect(res.status).toBe(200);
  return (res.body.data as { title: string }[]).map((r) => r.title);
};
const countOpen = async () => {
  const res = await s.t.http
    .get('/api/v2/doctype/Query%20Order/count')
    .query(query({ filters: { status: 'Open' } }))
    .set('Authorization', s.t.adminToken);
  expect(res.status).toBe(200);
  return res.body.data as number;
};
const both = async () => {
  const [v1, v2, count] = [await listOpen('v1'), await listOpen('v2'), await countOpen()];
  expect(v2).toEqual(v1);
  expect(count).toBe(v1.length);
  return v1;
};

test('a create, an update and a delete show in the next list and count', async () => {
  expect(await both()).toEqual(['alpha', 'epsilon', 'gamma']);
  const created = await s.t.http
    .post(PATHS.v2)
    .set('Authorization', s.t.adminToken)
    .send({ title: 'eta', status: 'Open' });
  expect(created.status).toBe(201);
  expect(await both()).toEqual(['alpha', 'epsilon', 'eta', 'gamma']);
  const name = created.body.data.name as string;
  expect(
    (
      await s.t.http
        .put(`${PATHS.v2}/${name}`)
        .set('Authorization', s.t.adminToken)
        .send({ title: 'aardvark' })
    ).status,
  ).toBe(200);
  expect(await both()).toEqual(['aardvark', 'alpha', 'epsilon', 'gamma']);
  expect(
    (
      await s.t.http
        .put(`${PATHS.v2}/${s.names.gamma}`)
        .set('Authorization', s.t.adminToken)
        .send({ status: 'Closed' })
    ).status,
  ).toBe(200);
  expect(await both()).toEqual(['aardvark', 'alpha', 'epsilon']);
  expect((await s.t.http.delete(`${PATHS.v2}/${name}`).set('Authorization', s.t.adminToken)).status).toBe(
    202,
  );
  expect(await both()).toEqual(['alpha', 'epsilon']);
});

test('a write straight to the table, not through the document API, shows too', async () => {
  const before = await both();
  await s.t.site.db.knex('tabQuery Order').where('name', s.names.alpha).update({ title: 'alpha prime' });
  const after = await both();
  expect(after).toEqual(before.map((t) => (t === 'alpha' ? 'alpha prime' : t)).sort());
});

test('a reused list answer is per reader and per version, and its count follows writes', async () => {
  const reader = await createUser(s.t, 'fresh-reader@example.com', ['Query Reader']);
  const owner = await createUser(s.t, 'fresh-owner@example.com', ['Query Owner Reader']);
  const params = query({ fields: ['*'], order_by: 'title asc', limit: 100, include: 'count' });
  const get = (auth: string, path: string = PATHS.v2) =>
    s.t.http.get(path).query(params).set('Authorization', auth);
  for (let round = 0; round < 2; round++) {
    // Same parameters, same remembered rows for the first two readers: each still gets its own fields and envelope.
    const [admin, byReader, byOwner, v1] = [
      await get(s.t.adminToken),
      await get(reader),
      await get(owner),
      await get(s.t.adminToken, PATHS.v1),
    ];
    expect(admin.body.data[0]).toHaveProperty('cost');
    expect(byReader.body.data[0]).not.toHaveProperty('cost');
    expect(byReader.body.data.length).toBe(admin.body.data.length);
    expect(byOwner.body.data).toEqual([]);
    expect(byOwner.body.count).toBe(0);
    expect(admin.body.count).toBe(admin.body.data.length);
    expect(admin.body.has_next_page).toBe(false);
    expect(v1.body).not.toHaveProperty('count');
    expect(v1.body).not.toHaveProperty('has_next_page');
    expect(v1.body.data.map((r: { name: string }) => r.name)).toEqual(
      admin.body.data.map((r: { name: string }) => r.name),
    );
  }
  const before = (await get(s.t.adminToken)).body.count as number;
  expect(
    (await s.t.http.post(PATHS.v2).set('Authorization', owner).send({ title: 'owned', status: 'Open' }))
      .status,
  ).toBe(201);
  const after = await get(s.t.adminToken);
  expect(after.body.count).toBe(before + 1);
  expect(after.body.data).toHaveLength(before + 1);
  const mine = await get(owner);
  expect(mine.body.data.map((r: { title: string }) => r.title)).toEqual(['owned']);
  expect(mine.body.count).toBe(1);
});
