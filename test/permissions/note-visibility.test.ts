// The shipped Note DocType's controller restriction: a Note that is not public is visible only to its owner (and
// Administrator) in get, list and count; every signed-in user may write only the Notes they own.
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let alice: string;
let bob: string;
let manager: string;
let privateNote: string;
let publicNote: string;

beforeAll(async () => {
  t = await createTestSite();
  alice = await createUser(t, 'alice@note.test', []);
  bob = await createUser(t, 'bob@note.test', []);
  manager = await createUser(t, 'manager@note.test', ['System Manager']);
  const mine = await t.http
    .post('/api/v2/document/Note')
    .set('Authorization', alice)
    .send({ title: 'alice private', content: 'p' });
  expect(mine.status).toBe(201);
  privateNote = mine.body.data.name;
  const shared = await t.http
    .post('/api/v2/document/Note')
    .set('Authorization', t.adminToken)
    .send({ title: 'announcement', public: 1 });
  expect(shared.status).toBe(201);
  publicNote = shared.body.data.name;
});
afterAll(() => t.close());

const titles = (res: { body: { data: { title: string }[] } }) => res.body.data.map((r) => r.title).sort();

test('the owner and Administrator see a private Note; other users, System Manager included, do not', async () => {
  for (const path of [
    `/api/resource/Note/${privateNote}`,
    `/api/v2/document/Note/${privateNote}`,
    `/api/v2/document/Note/${privateNote}/copy`,
  ]) {
    expect((await t.http.get(path).set('Authorization', alice)).status).toBe(200);
    expect((await t.http.get(path).set('Authorization', t.adminToken)).status).toBe(200);
    for (const other of [bob, manager]) {
      const res = await t.http.get(path).set('Authorization', other);
      expect([path, res.status, res.body.exc_type]).toEqual([path, 403, 'PermissionError']);
    }
  }
});

test('lists and counts show a private Note to its owner only; a public Note to everyone', async () => {
  for (const path of ['/api/resource/Note', '/api/v2/document/Note']) {
    const query = { fields: '["title"]' };
    expect(titles(await t.http.get(path).query(query).set('Authorization', alice))).toEqual([
      'alice private',
      'announcement',
    ]);
    expect(titles(await t.http.get(path).query(query).set('Authorization', bob))).toEqual(['announcement']);
    expect(titles(await t.http.get(path).query(query).set('Authorization', manager))).toEqual([
      'announcement',
    ]);
    expect(titles(await t.http.get(path).query(query).set('Authorization', t.adminToken))).toEqual([
      'alice private',
      'announcement',
    ]);
  }
  const count = (auth: string, filters?: object) =>
    t.http
      .get('/api/v2/doctype/Note/count')
      .query(filters ? { filters: JSON.stringify(filters) } : {})
      .set('Authorization', auth);
  expect((await count(alice)).body.data).toBe(2);
  expect((await count(bob)).body.data).toBe(1);
  expect((await count(bob, { name: privateNote })).body.data).toBe(0);
  expect((await count(bob, { title: 'alice private' })).body.data).toBe(0);
});

test('a public Note is readable by all, writable only by its owner; its public flag only by level-1 writers', async () => {
  expect((await t.http.get(`/api/v2/document/Note/${publicNote}`).set('Authorization', bob)).status).toBe(
    200,
  );
  const edit = await t.http
    .put(`/api/v2/document/Note/${publicNote}`)
    .set('Authorization', bob)
    .send({ content: 'defaced' });
  expect(edit.status).toBe(403);
  const publish = await t.http
    .put(`/api/v2/document/Note/${privateNote}`)
    .set('Authorization', alice)
    .send({ public: 1 });
  expect(publish.status).toBe(403);
  expect(publish.body.exception).toContain('public');
  const stored = await t.site.db.knex('tabNote').where({ name: privateNote }).first();
  expect(Number(stored.public)).toBe(0);
  const own = await t.http
    .put(`/api/v2/document/Note/${privateNote}`)
    .set('Authorization', alice)
    .send({ content: 'edited' });
  expect(own.status).toBe(200);
});

test('another user may neither change nor delete a private Note', async () => {
  for (const res of [
    await t.http.put(`/api/v2/document/Note/${privateNote}`).set('Authorization', bob).send({ content: 'x' }),
    await t.http.delete(`/api/v2/document/Note/${privateNote}`).set('Authorization', bob),
    await t.http.delete(`/api/resource/Note/${privateNote}`).set('Authorization', bob),
  ])
    expect(res.status).toBe(403);
  expect(await t.site.db.knex('tabNote').where({ name: privateNote })).toHaveLength(1);
});
