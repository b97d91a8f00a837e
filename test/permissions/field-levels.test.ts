// Field levels (permlevel): higher-level fields leave every read surface, naming one in a query is 403 with no
// oracle, changing one without write at its level is 403 naming the field; Password fields are never returned.
// Also security.md 6.3 #19, #23, #24 and 6.4 #35.
import { createUser, type TestSite } from '../helpers/test-site';
import {
  adminPost,
  createPermissionSite,
  postAs,
  storedRow,
  type PermissionUsers,
} from './helpers/permission-site';

let t: TestSite;
let users: PermissionUsers;
let north: Record<string, any>;

beforeAll(async () => {
  ({ t, users } = await createPermissionSite());
  north = await adminPost(t, 'Perm Case', {
    title: 'north',
    region: 'North',
    secret_note: 'n-secret',
    pin: 'p1',
    items: [{ item: 'a', cost: 7 }],
  });
});
afterAll(() => t.close());

const get = (path: string, auth: string, query: object = {}) =>
  t.http.get(path).query(query).set('Authorization', auth);

describe('reading', () => {
  const surfaces = () => [
    `/api/resource/Perm Case/${north.name}`,
    `/api/v2/document/Perm Case/${north.name}`,
    `/api/v2/document/Perm Case/${north.name}/copy`,
  ];

  test('a reader without level 1 sees neither the secret note nor the item costs; never the PIN', async () => {
    for (const path of surfaces()) {
      const res = await get(path, users.reader);
      expect(res.status).toBe(200);
      expect(res.body.data.title).toBe('north');
      expect(res.body.data).not.toHaveProperty('secret_note');
      expect(res.body.data).not.toHaveProperty('pin');
      expect(res.body.data.items).toHaveLength(1);
      expect(res.body.data.items[0].item).toBe('a');
      expect(res.body.data.items[0]).not.toHaveProperty('cost');
    }
  });

  test('the auditor (read at level 1) sees them; the PIN still never', async () => {
    for (const path of surfaces()) {
      const res = await get(path, users.auditor);
      expect(res.status).toBe(200);
      expect(res.body.data.secret_note).toBe('n-secret');
      expect(res.body.data.items[0].cost).toBe(7);
      expect(res.body.data).not.toHaveProperty('pin');
    }
    const admin = await get(`/api/v2/document/Perm Case/${north.name}`, t.adminToken);
    expect(admin.body.data).not.toHaveProperty('pin');
  });

  test('lists with every field (default and `*`) leave out higher-level fields for the reader only', async () => {
    for (const query of [{}, { fields: '["*"]' }]) {
      for (const path of ['/api/resource/Perm Case', '/api/v2/document/Perm Case']) {
        const reader = await get(path, users.reader, query);
        expect(reader.status).toBe(200);
        const row = reader.body.data.find((r: { name: string }) => r.name === north.name);
        expect(row).toBeDefined();
        expect(row).not.toHaveProperty('secret_note');
        expect(row).not.toHaveProperty('pin');
        const auditor = await get(path, users.auditor, query);
        expect(auditor.body.data.find((r: { name: string }) => r.name === north.name).secret_note).toBe(
          'n-secret',
        );
      }
    }
  });

  test('create and update answers leave out what the writer may not read', async () => {
    const created = await postAs(t, users.writer, 'Perm Case', { title: 'mine' });
    expect(created).not.toHaveProperty('secret_note');
    const res = await t.http
      .put(`/api/v2/document/Perm Case/${created.name}`)
      .set('Authorization', users.writer)
      .send({ amount: 3 });
    expect(res.status).toBe(200);
    expect(res.body.data).not.toHaveProperty('secret_note');
  });
});

describe('naming a higher-level field in a query (#19, #23, #24, #30)', () => {
  const REFUSED: [string, object][] = [
    ['fields', { fields: '["secret_note"]' }],
    ['fields, qualified', { fields: '["`tabPerm Case`.`secret_note`"]' }],
    ['fields, child column', { fields: '["items.cost"]' }],
    ['fields, Password', { fields: '["pin"]' }],
    ['filters dict', { filters: '{"secret_note": "n-secret"}' }],
    ['filters list', { filters: '[["Perm Case", "secret_note", "like", "n%"]]' }],
    ['filters on a child table (#24)', { filters: '[["Perm Case Item", "cost", ">", 0]]' }],
    ['order_by', { order_by: 'secret_note desc' }],
    ['group_by', { group_by: 'secret_note' }],
  ];

  test.each(REFUSED)('%s: 403 for the reader on list (v1, v2) and count', async (_what, query) => {
    for (const path of [
      '/api/resource/Perm Case',
      '/api/v2/document/Perm Case',
      '/api/v2/doctype/Perm Case/count',
    ]) {
      if (path.endsWith('/count') && !('filters' in query)) continue;
      const res = await get(path, users.reader, query);
      expect([path, res.status, res.body.exc_type]).toEqual([path, 403, 'PermissionError']);
    }
  });

  test('no oracle: a right and a wrong guess of the hidden value get byte-identical answers', async () => {
    for (const path of [
      '/api/resource/Perm Case',
      '/api/v2/document/Perm Case',
      '/api/v2/doctype/Perm Case/count',
    ]) {
      const right = await get(path, users.reader, {
        filters: '[["Perm Case", "secret_note", "like", "n%"]]',
      });
      const wrong = await get(path, users.reader, {
        filters: '[["Perm Case", "secret_note", "like", "zz%"]]',
      });
      expect(right.status).toBe(403);
      expect(JSON.stringify(wrong.body)).toBe(JSON.stringify(right.body));
    }
  });

  test('the auditor may filter and sort on the secret note', async () => {
    const res = await get('/api/v2/document/Perm Case', users.auditor, {
      filters: '{"secret_note": "n-secret"}',
      order_by: 'secret_note desc',
    });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { name: string }) => r.name)).toEqual([north.name]);
  });

  test('#19 User api_secret and Password fields: 403 even for Administrator, in every spelling', async () => {
    for (const fields of ['["api_secret"]', '["`tabUser`.`api_secret`"]', '["new_password"]']) {
      const res = await get('/api/resource/User', t.adminToken, { fields });
      expect([fields, res.status]).toEqual([fields, 403]);
    }
    const all = await get('/api/v2/document/User', t.adminToken, { fields: '["*"]' });
    expect(all.status).toBe(200);
    for (const row of all.body.data) {
      expect(row).not.toHaveProperty('api_secret');
      expect(row).not.toHaveProperty('new_password');
    }
  });

  test('#23 oracle attempts on User secrets: identical answers whatever prefix is guessed', async () => {
    const bodies = new Set<string>();
    for (const prefix of ['a', 'b', '0', '']) {
      for (const query of [
        { filters: JSON.stringify([['User', 'api_secret', 'like', `${prefix}%`]]) },
        { order_by: 'api_secret' },
      ]) {
        const res = await get('/api/resource/User', users.writer, query);
        expect(res.status).toBe(403);
        bodies.add(`${res.status}:${res.body.exc_type}`);
      }
    }
    expect(bodies.size).toBe(1);
  });

  test('#24 filters through a child table on User need read on User (and its level)', async () => {
    const res = await get('/api/resource/User', users.writer, {
      filters: '[["Has Role", "role", "=", "System Manager"]]',
    });
    expect(res.status).toBe(403);
    expect(res.body.exc_type).toBe('PermissionError');
  });
});

describe('writing above the write levels (#35)', () => {
  const fresh = () =>
    adminPost(t, 'Perm Case', { title: 'levels', secret_note: 'kept', items: [{ item: 'i', cost: 3 }] });

  test('changing the secret note is 403 naming the field and stores nothing', async () => {
    const doc = await fresh();
    const before = await storedRow(t, 'Perm Case', doc.name);
    for (const [method, path] of [
      ['put', `/api/resource/Perm Case/${doc.name}`],
      ['put', `/api/v2/document/Perm Case/${doc.name}`],
      ['patch', `/api/v2/document/Perm Case/${doc.name}`],
    ] as const) {
      const res = await t.http[method](path)
        .set('Authorization', users.writer)
        .send({ secret_note: 'overwritten', amount: 9 });
      expect(res.status).toBe(403);
      expect(res.body.exc_type).toBe('PermissionError');
      expect(res.body.exception).toContain('secret_note');
    }
    expect(await storedRow(t, 'Perm Case', doc.name)).toEqual(before);
  });

  test('(a) any value for a field the user cannot read is 403, the right guess as the wrong one: no oracle', async () => {
    const doc = await fresh();
    const before = await storedRow(t, 'Perm Case', doc.name);
    const answers = new Set<string>();
    for (const guess of ['kept', 'wrong', '']) {
      const res = await t.http
        .put(`/api/v2/document/Perm Case/${doc.name}`)
        .set('Authorization', users.writer)
        .send({ secret_note: guess, amount: 1 });
      expect(res.status).toBe(403);
      answers.add(`${res.status}:${res.body.exc_type}:${res.body.exception}`);
    }
    expect(answers.size).toBe(1);
    const row = (await t.site.db.knex('tabPerm Case Item').where({ parent: doc.name }).first()) as {
      name: string;
    };
    const childGuess = await t.http
      .put(`/api/v2/document/Perm Case/${doc.name}`)
      .set('Authorization', users.writer)
      .send({ items: [{ name: row.name, item: 'i', cost: 3 }] });
    expect(childGuess.status).toBe(403);
    expect(childGuess.body.exception).toContain('cost');
    const viaMethod = await t.http
      .post('/api/method/frappe.client.set_value')
      .set('Authorization', users.writer)
      .send({ doctype: 'Perm Case', name: doc.name, fieldname: 'secret_note', value: 'kept' });
    expect(viaMethod.status).toBe(403);
    expect(await storedRow(t, 'Perm Case', doc.name)).toEqual(before);
  });

  test('sending the unchanged value of a field the user reads but cannot write, or leaving it out, passes', async () => {
    const readerWriter = await createUser(t, 'reads-level-1@perm.test', ['Case Writer', 'Case Auditor']);
    const doc = await fresh();
    const same = await t.http
      .put(`/api/v2/document/Perm Case/${doc.name}`)
      .set('Authorization', readerWriter)
      .send({ secret_note: 'kept', amount: 1 });
    expect(same.status).toBe(200);
    const changed = await t.http
      .put(`/api/v2/document/Perm Case/${doc.name}`)
      .set('Authorization', readerWriter)
      .send({ secret_note: 'other' });
    expect(changed.status).toBe(403);
    const without = await t.http
      .put(`/api/v2/document/Perm Case/${doc.name}`)
      .set('Authorization', users.writer)
      .send({ amount: 2 });
    expect(without.status).toBe(200);
    expect((await storedRow(t, 'Perm Case', doc.name))?.secret_note).toBe('kept');
  });

  test('a child row’s higher-level cost: changing it is 403, re-sending the rows unchanged (without the hidden cost) passes', async () => {
    const doc = await fresh();
    const row = (await t.site.db.knex('tabPerm Case Item').where({ parent: doc.name }).first()) as {
      name: string;
    };
    const changed = await t.http
      .put(`/api/v2/document/Perm Case/${doc.name}`)
      .set('Authorization', users.writer)
      .send({ items: [{ name: row.name, item: 'i', cost: 99 }] });
    expect(changed.status).toBe(403);
    expect(changed.body.exception).toContain('cost');
    expect(Number((await t.site.db.knex('tabPerm Case Item').where({ name: row.name }).first()).cost)).toBe(
      3,
    );
    // The rows as the writer got them (no cost): the stored cost stays.
    const resent = await t.http
      .put(`/api/v2/document/Perm Case/${doc.name}`)
      .set('Authorization', users.writer)
      .send({ items: [{ name: row.name, item: 'renamed' }] });
    expect(resent.status).toBe(200);
    const kept = await t.site.db.knex('tabPerm Case Item').where({ name: row.name }).first();
    expect([kept.item, Number(kept.cost)]).toEqual(['renamed', 3]);
    const added = await t.http
      .put(`/api/v2/document/Perm Case/${doc.name}`)
      .set('Authorization', users.writer)
      .send({
        items: [
          { name: row.name, item: 'i', cost: 3 },
          { item: 'new', cost: 5 },
        ],
      });
    expect(added.status).toBe(403);
    expect(await t.site.db.knex('tabPerm Case Item').where({ parent: doc.name })).toHaveLength(1);
  });

  test('create with a higher-level value (even empty) is 403 and stores nothing; leaving it out passes', async () => {
    for (const path of ['/api/resource/Perm Case', '/api/v2/document/Perm Case']) {
      const refused = await t.http
        .post(path)
        .set('Authorization', users.writer)
        .send({ title: `leveled ${path}`, secret_note: 'mine' });
      expect(refused.status).toBe(403);
      expect(refused.body.exception).toContain('secret_note');
      expect(await t.site.db.knex('tabPerm Case').where({ title: `leveled ${path}` })).toHaveLength(0);
      const ok = await t.http
        .post(path)
        .set('Authorization', users.writer)
        .send({ title: `plain ${path}` });
      expect(ok.status).toBe(201);
      const empty = await t.http
        .post(path)
        .set('Authorization', users.writer)
        .send({ title: `empty ${path}`, secret_note: '' });
      expect(empty.status).toBe(403);
    }
  });

  test('System Manager writes level 1 (granted by the rows); Administrator too', async () => {
    const sm = await createUser(t, 'sm@perm.test', ['System Manager']);
    const doc = await fresh();
    const res = await t.http
      .put(`/api/v2/document/Perm Case/${doc.name}`)
      .set('Authorization', sm)
      .send({ secret_note: 'by sm' });
    expect(res.status).toBe(200);
    expect(res.body.data.secret_note).toBe('by sm');
    const admin = await t.http
      .put(`/api/v2/document/Perm Case/${doc.name}`)
      .set('Authorization', t.adminToken)
      .send({ secret_note: 'by admin' });
    expect(admin.status).toBe(200);
    expect((await storedRow(t, 'Perm Case', doc.name))?.secret_note).toBe('by admin');
  });
});
