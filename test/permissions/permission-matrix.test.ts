// The permission matrix: each kind of user × every document surface (v1, v2: get, copy, list, count, create,
// update, delete; frappe.client get, get_list, get_count, get_value, insert, set_value, save, delete) on both
// databases; statuses, what each user sees, and nothing changed after a refused write.
import type { TestSite } from '../helpers/test-site';
import {
  adminPost,
  createPermissionSite,
  postAs,
  storedRow,
  USER_IDS,
  type PermissionUsers,
} from './helpers/permission-site';

let t: TestSite;
let users: PermissionUsers;
/** Cases created by Administrator: in North (inside the restricted user's regions), in West (outside), with no region. */
let north: Record<string, any>;
let west: Record<string, any>;
let open: Record<string, any>;
/** A case the Case Owner user created. */
let owned: Record<string, any>;

beforeAll(async () => {
  ({ t, users } = await createPermissionSite());
  north = await adminPost(t, 'Perm Case', {
    title: 'north',
    region: 'North',
    amount: 5,
    secret_note: 'n-secret',
    pin: 'p1',
    items: [{ item: 'a', cost: 7 }],
  });
  west = await adminPost(t, 'Perm Case', { title: 'west', region: 'West', secret_note: 'w-secret' });
  open = await adminPost(t, 'Perm Case', { title: 'open' });
  owned = await postAs(t, users.owner, 'Perm Case', { title: 'owned' });
});
afterAll(() => t.close());

type UserKey = keyof PermissionUsers;
const USERS: UserKey[] = [
  'nobody',
  'reader',
  'writer',
  'owner',
  'otherOwner',
  'restricted',
  'auditor',
  'submitter',
];
const enc = encodeURIComponent;

/** The read surfaces of one document. */
const READS: Record<string, (name: string, auth: string) => Promise<{ status: number; body: any }>> = {
  'v1 get': (name, auth) => t.http.get(`/api/resource/Perm Case/${enc(name)}`).set('Authorization', auth),
  'v2 get': (name, auth) => t.http.get(`/api/v2/document/Perm Case/${enc(name)}`).set('Authorization', auth),
  'v2 copy': (name, auth) =>
    t.http.get(`/api/v2/document/Perm Case/${enc(name)}/copy`).set('Authorization', auth),
  'frappe.client.get (v1)': (name, auth) =>
    t.http
      .post('/api/method/frappe.client.get')
      .set('Authorization', auth)
      .send({ doctype: 'Perm Case', name }),
  'frappe.client.get (v2)': (name, auth) =>
    t.http
      .get('/api/v2/method/frappe.client.get')
      .query({ doctype: 'Perm Case', name })
      .set('Authorization', auth),
  'v2 document method (GET)': (name, auth) =>
    t.http.get(`/api/v2/document/Perm Case/${enc(name)}/method/peek`).set('Authorization', auth),
  'run_doc_method (stored document)': (name, auth) =>
    t.http
      .get('/api/v2/method/run_doc_method')
      .query({ method: 'peek', document: JSON.stringify({ doctype: 'Perm Case', name }) })
      .set('Authorization', auth),
};

/** Who may read which case: 200 or 403 (the DocType is readable by all but `nobody`, so the document answer is 403). */
const READ_STATUS: Record<UserKey, (name: string) => number> = {
  nobody: () => 403,
  reader: () => 200,
  writer: () => 200,
  owner: (name) => (name === owned.name ? 200 : 403),
  otherOwner: () => 403,
  restricted: (name) => (name === west.name ? 403 : 200),
  auditor: () => 200,
  submitter: () => 200,
};

describe.each(Object.keys(READS))('%s', (surface) => {
  test.each(USERS)('as %s answers by the user’s rights on each case', async (user) => {
    for (const doc of [north, west, open, owned]) {
      const res = await READS[surface]!(doc.name, users[user]);
      expect([surface, user, doc.title, res.status]).toEqual([
        surface,
        user,
        doc.title,
        READ_STATUS[user](doc.name),
      ]);
      expect(res.body.exc_type ?? null).toBe(res.status === 403 ? 'PermissionError' : null);
    }
  });
});

test('a missing case answers 403 to a user who may not read the DocType and 404 to one who may', async () => {
  for (const [what, surface] of Object.entries(READS)) {
    // run_doc_method takes a name it cannot find as an in-memory document, not as a lookup.
    if (what.startsWith('run_doc_method')) continue;
    expect((await surface('no-such-case', users.nobody)).status).toBe(403);
    expect((await surface('no-such-case', users.reader)).status).toBe(404);
  }
});

test('no credentials: 401 on every surface', async () => {
  for (const res of [
    await t.http.get(`/api/resource/Perm Case/${north.name}`),
    await t.http.get(`/api/v2/document/Perm Case/${north.name}`),
    await t.http.get('/api/v2/document/Perm Case'),
    await t.http.get('/api/v2/doctype/Perm Case/count'),
    await t.http.post('/api/v2/document/Perm Case').send({ title: 'guest' }),
    await t.http.put(`/api/v2/document/Perm Case/${north.name}`).send({ title: 'guest' }),
    await t.http.delete(`/api/v2/document/Perm Case/${north.name}`),
  ]) {
    expect(res.status).toBe(401);
    expect(res.body.exc_type).toBe('AuthenticationError');
  }
});

describe('lists and counts', () => {
  const VISIBLE: Record<Exclude<UserKey, 'nobody'>, () => string[]> = {
    reader: () => [north.name, west.name, open.name, owned.name],
    writer: () => [north.name, west.name, open.name, owned.name],
    owner: () => [owned.name],
    otherOwner: () => [],
    // North, and the cases without a region (an empty Link is allowed).
    restricted: () => [north.name, open.name, owned.name],
    auditor: () => [north.name, west.name, open.name, owned.name],
    submitter: () => [north.name, west.name, open.name, owned.name],
  };
  const mine = (names: string[]) =>
    names.filter((n) => [north.name, west.name, open.name, owned.name].includes(n)).sort();

  test.each(Object.keys(VISIBLE) as (keyof typeof VISIBLE)[])(
    'as %s: v1 list, v2 list and count show only the reachable cases',
    async (user) => {
      const expected = VISIBLE[user]().sort();
      const v1 = await t.http
        .get('/api/resource/Perm Case')
        .query({ fields: '["name"]', limit_page_length: 0 })
        .set('Authorization', users[user]);
      expect(v1.status).toBe(200);
      expect(mine(v1.body.data.map((r: { name: string }) => r.name))).toEqual(expected);
      const v2 = await t.http
        .get('/api/v2/document/Perm Case')
        .query({ fields: '["name"]', limit: 100 })
        .set('Authorization', users[user]);
      expect(v2.status).toBe(200);
      expect(mine(v2.body.data.map((r: { name: string }) => r.name))).toEqual(expected);
      const count = await t.http.get('/api/v2/doctype/Perm Case/count').set('Authorization', users[user]);
      expect(count.status).toBe(200);
      expect(count.body.data).toBe(v2.body.data.length);
      // A count filtered on an unreachable name reveals nothing.
      const probe = await t.http
        .get('/api/v2/doctype/Perm Case/count')
        .query({ filters: JSON.stringify({ name: west.name }) })
        .set('Authorization', users[user]);
      expect(probe.body.data).toBe(expected.includes(west.name) ? 1 : 0);
    },
  );

  test.each(Object.keys(VISIBLE) as (keyof typeof VISIBLE)[])(
    'as %s: frappe.client get_list, get_count and get_value reach the same cases',
    async (user) => {
      const expected = VISIBLE[user]().sort();
      const list = await t.http
        .post('/api/method/frappe.client.get_list')
        .set('Authorization', users[user])
        .send({ doctype: 'Perm Case', fields: ['name'], limit_page_length: 0 });
      expect(list.status).toBe(200);
      expect(mine(list.body.message.map((r: { name: string }) => r.name))).toEqual(expected);
      const count = await t.http
        .post('/api/method/frappe.client.get_count')
        .set('Authorization', users[user])
        .send({ doctype: 'Perm Case' });
      expect(count.body.message).toBe(list.body.message.length);
      const value = await t.http
        .post('/api/method/frappe.client.get_value')
        .set('Authorization', users[user])
        .send({ doctype: 'Perm Case', fieldname: 'title', filters: west.name });
      expect(value.status).toBe(200);
      // Frappe's get_value: `{}` when nothing the user may read matches.
      expect(value.body.message).toEqual(expected.includes(west.name) ? { title: 'west' } : {});
    },
  );

  test('a user without read gets 403 on list and count', async () => {
    for (const res of [
      await t.http.get('/api/resource/Perm Case').set('Authorization', users.nobody),
      await t.http.get('/api/v2/document/Perm Case').set('Authorization', users.nobody),
      await t.http.get('/api/v2/doctype/Perm Case/count').set('Authorization', users.nobody),
      await t.http
        .post('/api/method/frappe.client.get_list')
        .set('Authorization', users.nobody)
        .send({ doctype: 'Perm Case' }),
      await t.http
        .post('/api/method/frappe.client.get_count')
        .set('Authorization', users.nobody)
        .send({ doctype: 'Perm Case' }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.exc_type).toBe('PermissionError');
    }
  });
});

describe('writes', () => {
  /** A fresh case for each write attempt, so a successful write does not disturb the next one. */
  const fresh = (body: object = {}) =>
    adminPost(t, 'Perm Case', { title: 'target', region: 'North', secret_note: 's', ...body });
  const WRITES: Record<string, (name: string, auth: string) => Promise<{ status: number; body: any }>> = {
    'v1 PUT': (name, auth) =>
      t.http.put(`/api/resource/Perm Case/${name}`).set('Authorization', auth).send({ amount: 42 }),
    'v2 PUT': (name, auth) =>
      t.http.put(`/api/v2/document/Perm Case/${name}`).set('Authorization', auth).send({ amount: 42 }),
    'v2 PATCH': (name, auth) =>
      t.http.patch(`/api/v2/document/Perm Case/${name}`).set('Authorization', auth).send({ amount: 42 }),
    'frappe.client.set_value': (name, auth) =>
      t.http
        .post('/api/method/frappe.client.set_value')
        .set('Authorization', auth)
        .send({ doctype: 'Perm Case', name, fieldname: 'amount', value: 42 }),
    'v1 run_method': (name, auth) =>
      t.http
        .post(`/api/resource/Perm Case/${name}`)
        .query({ run_method: 'set_answer' })
        .set('Authorization', auth)
        .send({}),
    'v2 document method (POST)': (name, auth) =>
      t.http.post(`/api/v2/document/Perm Case/${name}/method/set_answer`).set('Authorization', auth).send({}),
    'frappe.client.save': (name, auth) =>
      t.http
        .post('/api/v2/method/frappe.client.save')
        .set('Authorization', auth)
        .send({ doc: { doctype: 'Perm Case', name, amount: 42 } }),
  };
  const UPDATE_STATUS: Record<UserKey, number> = {
    nobody: 403,
    reader: 403,
    writer: 200,
    owner: 403,
    otherOwner: 403,
    restricted: 200,
    auditor: 403,
    submitter: 200,
  };

  test.each(Object.keys(WRITES))(
    '%s: allowed users change the case, refused ones change nothing',
    async (surface) => {
      for (const user of USERS) {
        const doc = await fresh();
        const before = await storedRow(t, 'Perm Case', doc.name);
        const res = await WRITES[surface]!(doc.name, users[user]);
        expect([user, res.status]).toEqual([user, UPDATE_STATUS[user]]);
        const after = await storedRow(t, 'Perm Case', doc.name);
        if (res.status === 200) expect(after?.amount).toBe(42);
        else expect(after).toEqual(before);
      }
    },
  );

  test('updates: the owner may change an own case, not another’s; the restricted user not a case outside the regions', async () => {
    const own = await postAs(t, users.owner, 'Perm Case', { title: 'mine' });
    expect((await WRITES['v2 PUT']!(own.name, users.owner)).status).toBe(200);
    expect((await WRITES['v2 PUT']!(own.name, users.otherOwner)).status).toBe(403);
    const outside = await fresh({ region: 'West' });
    const before = await storedRow(t, 'Perm Case', outside.name);
    expect((await WRITES['v1 PUT']!(outside.name, users.restricted)).status).toBe(403);
    expect(await storedRow(t, 'Perm Case', outside.name)).toEqual(before);
  });

  const DELETES: Record<string, (name: string, auth: string) => Promise<{ status: number; body: any }>> = {
    'v1 DELETE': (name, auth) => t.http.delete(`/api/resource/Perm Case/${name}`).set('Authorization', auth),
    'v2 DELETE': (name, auth) =>
      t.http.delete(`/api/v2/document/Perm Case/${name}`).set('Authorization', auth),
    'frappe.client.delete': async (name, auth) => {
      const res = await t.http
        .post('/api/method/frappe.client.delete')
        .set('Authorization', auth)
        .send({ doctype: 'Perm Case', name });
      // A method call answers 200 where the resource endpoint answers 202.
      return { status: res.status === 200 ? 202 : res.status, body: res.body };
    },
  };
  const DELETE_STATUS: Record<UserKey, number> = {
    nobody: 403,
    reader: 403,
    writer: 202,
    owner: 403,
    otherOwner: 403,
    restricted: 202,
    auditor: 403,
    submitter: 403,
  };

  test.each(Object.keys(DELETES))(
    '%s: allowed users delete, refused ones leave the case in place',
    async (surface) => {
      for (const user of USERS) {
        const doc = await fresh({ items: [{ item: 'x' }] });
        const before = await storedRow(t, 'Perm Case', doc.name);
        const res = await DELETES[surface]!(doc.name, users[user]);
        expect([user, res.status]).toEqual([user, DELETE_STATUS[user]]);
        if (res.status === 202) expect(await storedRow(t, 'Perm Case', doc.name)).toBeUndefined();
        else {
          expect(await storedRow(t, 'Perm Case', doc.name)).toEqual(before);
          expect(
            await t.site.db.knex('tabPerm Case Item').where({ parent: doc.name }).count({ n: '*' }),
          ).toEqual([{ n: 1 }]);
        }
      }
      const own = await postAs(t, users.owner, 'Perm Case', { title: 'mine to delete' });
      expect((await DELETES[surface]!(own.name, users.otherOwner)).status).toBe(403);
      expect((await DELETES[surface]!(own.name, users.owner)).status).toBe(202);
      const outside = await fresh({ region: 'West' });
      expect((await DELETES[surface]!(outside.name, users.restricted)).status).toBe(403);
      expect(await storedRow(t, 'Perm Case', outside.name)).toBeDefined();
    },
  );

  test('#36 a child row naming another parent is written under this case, never under the other parent', async () => {
    const doc = await fresh();
    const other = await fresh();
    const res = await t.http
      .put(`/api/v2/document/Perm Case/${doc.name}`)
      .set('Authorization', users.writer)
      .send({ items: [{ item: 'smuggled', parent: other.name, parenttype: 'User', parentfield: 'roles' }] });
    expect(res.status).toBe(200);
    const rows = await t.site.db.knex('tabPerm Case Item').where({ item: 'smuggled' });
    expect(rows.map((r: Record<string, unknown>) => [r.parent, r.parenttype, r.parentfield])).toEqual([
      [doc.name, 'Perm Case', 'items'],
    ]);
    expect(await t.site.db.knex('tabPerm Case Item').where({ parent: other.name })).toHaveLength(0);
    expect(
      await t.site.db.knex('tabHas Role').where({ role: 'System Manager', parent: USER_IDS.writer }),
    ).toHaveLength(0);
  });

  const CREATE_STATUS: Record<UserKey, number> = {
    nobody: 403,
    reader: 403,
    writer: 201,
    owner: 201,
    otherOwner: 201,
    restricted: 201,
    auditor: 403,
    submitter: 201,
  };

  test.each(['/api/resource/Perm Case', '/api/v2/document/Perm Case', '/api/method/frappe.client.insert'])(
    'POST %s: create needs the create right; nothing is stored when refused',
    async (path) => {
      for (const user of USERS) {
        const title = `created by ${user} at ${path}`;
        const body = { title, region: 'North' };
        const res = await t.http
          .post(path)
          .set('Authorization', users[user])
          .send(path.includes('frappe.client') ? { doc: { doctype: 'Perm Case', ...body } } : body);
        // A method call answers 200 where the resource endpoint answers 201.
        expect([user, res.status === 200 ? 201 : res.status]).toEqual([user, CREATE_STATUS[user]]);
        const rows = await t.site.db.knex('tabPerm Case').where({ title });
        const created = res.status === 200 || res.status === 201;
        expect(rows).toHaveLength(created ? 1 : 0);
        if (created) expect(rows[0].owner).toBe(USER_IDS[user]);
      }
    },
  );
});
