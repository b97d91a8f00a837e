// Versions: a DocType with track_changes writes one Version per update with Frappe's diff, on every update path; child
// rows added, removed, changed and moved; Password fields never; nothing for an insert, an unchanged save or an
// untracked DocType; a failing update writes none.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { apiScript } from '../scripts/script-helpers';
import { createLedger, versionsOf } from './history-helpers';

let t: TestSite;
let clerk: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  clerk = await createUser(t, 'clerk@history.test', ['Ledger Clerk']);
});
afterAll(() => t.close());

const admin = () => ({ Authorization: t.adminToken });
const path = (name: string) => `/api/v2/document/Tracked Ledger/${encodeURIComponent(name)}`;

describe('every update path writes one Version with the changed value', () => {
  const paths: [string, (name: string, title: string) => Promise<{ status: number }>][] = [
    ['v1 PUT', (n, title) => t.http.put(`/api/resource/Tracked Ledger/${n}`).set(admin()).send({ title })],
    ['v2 PUT', (n, title) => t.http.put(path(n)).set(admin()).send({ title })],
    ['v2 PATCH', (n, title) => t.http.patch(path(n)).set(admin()).send({ title })],
    [
      'frappe.client.set_value',
      (n, title) =>
        t.http
          .post('/api/method/frappe.client.set_value')
          .set(admin())
          .send({ doctype: 'Tracked Ledger', name: n, fieldname: 'title', value: title }),
    ],
    [
      'frappe.client.save',
      (n, title) =>
        t.http
          .post('/api/method/frappe.client.save')
          .set(admin())
          .send({ doc: { doctype: 'Tracked Ledger', name: n, title } }),
    ],
    [
      'frappe.client.bulk_update',
      (n, title) =>
        t.http
          .post('/api/method/frappe.client.bulk_update')
          .set(admin())
          .send({ docs: [{ doctype: 'Tracked Ledger', docname: n, title }] }),
    ],
    [
      'v2 bulk_update',
      (n, title) =>
        t.http
          .post('/api/v2/document/Tracked Ledger/bulk_update')
          .set(admin())
          .send({ docs: [{ name: n, title }] }),
    ],
    [
      'document method',
      (n, title) =>
        t.http
          .post(`${path(n)}/method/retitle`)
          .set(admin())
          .send({ title }),
    ],
  ];
  test.each(paths)('%s', async (_label, update) => {
    const doc = await createLedger(t);
    expect(await versionsOf(t, doc.name)).toEqual([]);
    expect((await update(doc.name, 'second')).status).toBe(200);
    const versions = await versionsOf(t, doc.name);
    expect(versions).toEqual([
      {
        owner: 'Administrator',
        diff: { changed: [['title', 'first', 'second']], added: [], removed: [], row_changed: [] },
      },
    ]);
  });

  test('a Server Script (frappe.db.set_value), as the calling user', async () => {
    const doc = await createLedger(t);
    await apiScript(
      t,
      'history_retitle',
      "frappe.db.set_value('Tracked Ledger', frappe.form_dict.name, 'title', 'by script')",
    );
    const res = await t.http
      .post('/api/method/history_retitle')
      .set('Authorization', clerk)
      .send({ name: doc.name });
    expect(res.status).toBe(200);
    expect(await versionsOf(t, doc.name)).toEqual([
      {
        owner: 'clerk@history.test',
        diff: { changed: [['title', 'first', 'by script']], added: [], removed: [], row_changed: [] },
      },
    ]);
  });
});

describe('child rows', () => {
  const rowsOf = (doc: Record<string, any>) =>
    (doc.lines as Record<string, any>[]).map(({ name, item, qty }) => ({ name, item, qty }));

  test('a row added and a row removed', async () => {
    const doc = await createLedger(t, {
      lines: [
        { item: 'a', qty: 1 },
        { item: 'b', qty: 2 },
      ],
    });
    const [a, b] = rowsOf(doc) as [any, any];
    const res = await t.http
      .put(path(doc.name))
      .set(admin())
      .send({ lines: [a, { item: 'c', qty: 3 }] });
    expect(res.status).toBe(200);
    const c = res.body.data.lines[1];
    const [{ diff }] = (await versionsOf(t, doc.name)) as [any];
    expect(diff.changed).toEqual([]);
    expect(diff.row_changed).toEqual([]);
    expect(diff.added).toEqual([['lines', { name: c.name, idx: 2, item: 'c', qty: 3, cost: 0, todo: null }]]);
    expect(diff.removed).toEqual([
      ['lines', { name: b.name, idx: 2, item: 'b', qty: 2, cost: 0, todo: null }],
    ]);
  });

  test('a row changed: [table, index, row name, [[field, old, new]]]', async () => {
    const doc = await createLedger(t, {
      lines: [
        { item: 'a', qty: 1 },
        { item: 'b', qty: 2 },
      ],
    });
    const [a, b] = rowsOf(doc) as [any, any];
    expect(
      (
        await t.http
          .put(path(doc.name))
          .set(admin())
          .send({ lines: [a, { ...b, qty: 5 }] })
      ).status,
    ).toBe(200);
    const [{ diff }] = (await versionsOf(t, doc.name)) as [any];
    expect(diff).toEqual({
      changed: [],
      added: [],
      removed: [],
      row_changed: [['lines', 1, b.name, [['qty', 2, 5]]]],
    });
  });

  test('rows reordered: each moved row records its idx', async () => {
    const doc = await createLedger(t, { lines: [{ item: 'a' }, { item: 'b' }, { item: 'c' }] });
    const [a, b, c] = rowsOf(doc) as [any, any, any];
    expect(
      (
        await t.http
          .put(path(doc.name))
          .set(admin())
          .send({ lines: [b, a, c] })
      ).status,
    ).toBe(200);
    const [{ diff }] = (await versionsOf(t, doc.name)) as [any];
    expect(diff.row_changed).toEqual([
      ['lines', 0, b.name, [['idx', 2, 1]]],
      ['lines', 1, a.name, [['idx', 1, 2]]],
    ]);
    expect([diff.changed, diff.added, diff.removed]).toEqual([[], [], []]);
  });

  test('the same rows sent back again write no Version', async () => {
    const doc = await createLedger(t, { lines: [{ item: 'a', qty: 1 }] });
    expect((await t.http.put(path(doc.name)).set(admin()).send({ lines: doc.lines })).status).toBe(200);
    expect(await versionsOf(t, doc.name)).toEqual([]);
  });
});

describe('what a Version leaves out', () => {
  test('a Password field never appears; changing only it writes no Version', async () => {
    const doc = await createLedger(t, { secret: 'one-secret' });
    expect((await t.http.put(path(doc.name)).set(admin()).send({ secret: 'two-secret' })).status).toBe(200);
    expect(await versionsOf(t, doc.name)).toEqual([]);
    await t.http.put(path(doc.name)).set(admin()).send({ secret: 'three-secret', status: 'Closed' });
    const versions = await versionsOf(t, doc.name);
    expect(versions.map((v) => v.diff.changed)).toEqual([[['status', 'Open', 'Closed']]]);
    expect(JSON.stringify(versions)).not.toContain('secret');
  });

  test('an insert and an unchanged save write none', async () => {
    const doc = await createLedger(t);
    expect((await t.http.put(path(doc.name)).set(admin()).send({ title: 'first' })).status).toBe(200);
    expect(await versionsOf(t, doc.name)).toEqual([]);
  });

  test('an untracked DocType writes none; a core DocType Frappe tracks (ToDo, User) does', async () => {
    const widget = (await t.http.post('/api/v2/document/Widget').set(admin()).send({ title: 'w' })).body.data;
    await t.http.put(`/api/v2/document/Widget/${widget.name}`).set(admin()).send({ title: 'w2' });
    expect(await versionsOf(t, widget.name, 'Widget')).toEqual([]);
    const todo = (await t.http.post('/api/v2/document/ToDo').set(admin()).send({ description: 'd1' })).body
      .data;
    await t.http.put(`/api/v2/document/ToDo/${todo.name}`).set(admin()).send({ description: 'd2' });
    expect((await versionsOf(t, todo.name, 'ToDo')).map((v) => v.diff.changed)).toEqual([
      [['description', 'd1', 'd2']],
    ]);
    await t.http.put('/api/v2/document/User/clerk@history.test').set(admin()).send({ last_name: 'Ledger' });
    const user = await versionsOf(t, 'clerk@history.test', 'User');
    // full_name follows the names (User.set_full_name), so the Version shows it too, as Frappe's does.
    expect(user.map((v) => v.diff.changed)).toEqual([
      [
        ['last_name', null, 'Ledger'],
        ['full_name', 'clerk', 'clerk Ledger'],
      ],
    ]);
  });
});

describe('a failing update writes no Version', () => {
  test('a hook failing after the row is written (on_update) rolls the Version back with it', async () => {
    const doc = await createLedger(t);
    const res = await t.http.put(path(doc.name)).set(admin()).send({ title: 'fail after write' });
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe('ValidationError');
    expect(await versionsOf(t, doc.name)).toEqual([]);
    expect((await t.http.get(path(doc.name)).set(admin())).body.data.title).toBe('first');
  });

  test('a refused update (permission, stale modified) writes none', async () => {
    const doc = await createLedger(t);
    const reader = await createUser(t, 'reader-v@history.test', ['Ledger Reader']);
    expect((await t.http.put(path(doc.name)).set('Authorization', reader).send({ title: 'x' })).status).toBe(
      403,
    );
    const stale = await t.http
      .put(path(doc.name))
      .set(admin())
      .send({ title: 'x', modified: '2000-01-01 00:00:00.000000' });
    expect(stale.status).toBe(409);
    expect(await versionsOf(t, doc.name)).toEqual([]);
  });
});

test('Versions are read through the REST API by System Manager only', async () => {
  const doc = await createLedger(t);
  await t.http.put(path(doc.name)).set(admin()).send({ title: 'second' });
  const list = await t.http
    .get('/api/resource/Version')
    .query({
      filters: JSON.stringify([['docname', '=', doc.name]]),
      fields: JSON.stringify(['ref_doctype', 'data']),
    })
    .set(admin());
  expect(list.status).toBe(200);
  expect(list.body.data).toEqual([
    { ref_doctype: 'Tracked Ledger', data: expect.stringContaining('"second"') },
  ]);
  const manager = await createUser(t, 'manager-v@history.test', ['System Manager']);
  expect((await t.http.get('/api/resource/Version').set('Authorization', manager)).status).toBe(200);
  const res = await t.http.get('/api/resource/Version').set('Authorization', clerk);
  expect(res.status).toBe(403);
});

test('a Single (System Settings) keeps its versions under its own name', async () => {
  const path1 = '/api/v2/document/System Settings/System Settings';
  expect((await t.http.put(path1).set(admin()).send({ session_expiry: '12:00' })).status).toBe(200);
  expect((await t.http.put(path1).set(admin()).send({ session_expiry: '13:00' })).status).toBe(200);
  const versions = await versionsOf(t, 'System Settings', 'System Settings');
  expect(versions.at(-1)?.diff.changed).toEqual([['session_expiry', '12:00', '13:00']]);
});

test('a bulk_update whose one item fails writes the Versions of the others and none for the failed one', async () => {
  const a = await createLedger(t);
  const b = await createLedger(t);
  const res = await t.http
    .post('/api/v2/document/Tracked Ledger/bulk_update')
    .set(admin())
    .send({
      docs: [
        { name: a.name, title: 'a2' },
        { name: b.name, title: 'fail after write' },
      ],
    });
  expect(res.status).toBe(200);
  expect(res.body.data.updated).toEqual([a.name]);
  expect((await versionsOf(t, a.name)).map((v) => v.diff.changed)).toEqual([[['title', 'first', 'a2']]]);
  expect(await versionsOf(t, b.name)).toEqual([]);
});
