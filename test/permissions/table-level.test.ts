// A Table field's permlevel guards its rows' values, not only which rows there are: Note's `seen_by` is at level 1,
// which its owner (role All) reads but may not write, so changing a row's user is 403 through the parent and through
// the row, and re-sending the rows as read passes.
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let owner: string;
beforeAll(async () => {
  t = await createTestSite();
  owner = await createUser(t, 'note-owner@level.test', []);
  await createUser(t, 'someone@level.test', []);
});
afterAll(() => t.close());

test('the owner may not change a row of a table above its write level, by the parent or by the row', async () => {
  const made = await t.http.post('/api/v2/document/Note').set('Authorization', owner).send({ title: 'mine' });
  expect(made.status).toBe(201);
  const name = made.body.data.name as string;
  const seeded = await t.http
    .put(`/api/v2/document/Note/${name}`)
    .set('Authorization', t.adminToken)
    .send({ seen_by: [{ user: 'note-owner@level.test' }] });
  expect(seeded.status).toBe(200);
  const read = await t.http.get(`/api/v2/document/Note/${name}`).set('Authorization', owner);
  const rows = read.body.data.seen_by as { name: string; user: string }[];
  expect(rows.map((r) => r.user)).toEqual(['note-owner@level.test']);

  const asRead = await t.http
    .put(`/api/v2/document/Note/${name}`)
    .set('Authorization', owner)
    .send({ seen_by: rows });
  expect(asRead.status).toBe(200);
  const viaParent = await t.http
    .put(`/api/v2/document/Note/${name}`)
    .set('Authorization', owner)
    .send({ seen_by: rows.map((r) => ({ ...r, user: 'someone@level.test' })) });
  expect(viaParent.status).toBe(403);
  expect(viaParent.body.exc_type).toBe('PermissionError');
  const viaRow = await t.http
    .put(`/api/resource/Note%20Seen%20By/${rows[0]?.name}`)
    .set('Authorization', owner)
    .send({ user: 'someone@level.test' });
  expect(viaRow.status).toBe(403);
  const stored = await t.site.db.knex('tabNote Seen By').where({ parent: name }).select('user');
  expect(stored.map((r: { user: string }) => r.user)).toEqual(['note-owner@level.test']);
});
