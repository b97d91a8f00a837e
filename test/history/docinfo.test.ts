// get_docinfo: a document's versions, newest first, for anyone who may read the document (v1 and v2), without the
// values of fields above the reader's permlevel (in `changed`, child rows and row changes); others get 403/404.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { createLedger } from './history-helpers';

let t: TestSite;
let reader: string;
let outsider: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  reader = await createUser(t, 'reader-i@history.test', ['Ledger Reader']);
  outsider = await createUser(t, 'outsider-i@history.test', []);
});
afterAll(() => t.close());

const admin = () => ({ Authorization: t.adminToken });
const path = (name: string) => `/api/v2/document/Tracked Ledger/${encodeURIComponent(name)}`;
const docinfo = (name: string, auth: string, version: 1 | 2 = 1) =>
  t.http
    .get(
      version === 1
        ? '/api/method/frappe.desk.form.load.get_docinfo'
        : '/api/v2/method/frappe.desk.form.load.get_docinfo',
    )
    .query({ doctype: 'Tracked Ledger', name })
    .set('Authorization', auth);
const diffs = (versions: { data: string }[]) => versions.map((v) => JSON.parse(v.data));

test('versions newest first, with owner and creation, in v1 message and v2 data', async () => {
  const doc = await createLedger(t);
  await t.http.put(path(doc.name)).set(admin()).send({ title: 'second' });
  await t.http.put(path(doc.name)).set(admin()).send({ status: 'Closed' });
  const v1 = await docinfo(doc.name, t.adminToken);
  expect(v1.status).toBe(200);
  expect(v1.body.message.versions).toEqual([
    {
      name: expect.any(String),
      owner: 'Administrator',
      creation: expect.any(String),
      data: expect.any(String),
    },
    {
      name: expect.any(String),
      owner: 'Administrator',
      creation: expect.any(String),
      data: expect.any(String),
    },
  ]);
  expect(diffs(v1.body.message.versions).map((d) => d.changed)).toEqual([
    [['status', 'Open', 'Closed']],
    [['title', 'first', 'second']],
  ]);
  const v2 = await docinfo(doc.name, t.adminToken, 2);
  expect(v2.status).toBe(200);
  expect(v2.body.data).toEqual(v1.body.message);
});

test('a reader without permlevel 1 sees no value of a level-1 field, in the document or its rows', async () => {
  const doc = await createLedger(t, { amount: 10, lines: [{ item: 'a', qty: 1, cost: 7 }] });
  const [line] = doc.lines as [{ name: string }];
  // One version changes title and amount; one only amount; one a row's qty and cost and adds a row.
  await t.http.put(path(doc.name)).set(admin()).send({ title: 'second', amount: 20 });
  await t.http.put(path(doc.name)).set(admin()).send({ amount: 30 });
  await t.http
    .put(path(doc.name))
    .set(admin())
    .send({
      lines: [
        { ...doc.lines[0], qty: 2, cost: 8 },
        { item: 'b', cost: 99 },
      ],
    });
  const all = diffs((await docinfo(doc.name, t.adminToken)).body.message.versions);
  expect(all).toHaveLength(3);
  expect(JSON.stringify(all)).toContain('99');
  const res = await docinfo(doc.name, reader);
  expect(res.status).toBe(200);
  const seen = diffs(res.body.message.versions);
  expect(seen).toHaveLength(2);
  const [rows, first] = seen;
  expect(first.changed).toEqual([['title', 'first', 'second']]);
  expect(rows.row_changed).toEqual([['lines', 0, line.name, [['qty', 1, 2]]]]);
  expect(rows.added).toEqual([
    ['lines', { name: expect.any(String), idx: 2, item: 'b', qty: 0, todo: null }],
  ]);
  const text = JSON.stringify(seen);
  for (const hidden of ['amount', 'cost', ',20]', ',30]', ',8]', ',99']) expect(text).not.toContain(hidden);
});

test('a user who may not read the document gets the answer a GET gets; missing arguments are 400', async () => {
  const doc = await createLedger(t);
  const get = await t.http.get(path(doc.name)).set('Authorization', outsider);
  const res = await docinfo(doc.name, outsider);
  expect(res.status).toBe(get.status);
  expect([403, 404]).toContain(res.status);
  expect(res.body).not.toHaveProperty('message');
  expect((await docinfo('no-such-ledger', t.adminToken)).status).toBe(404);
  const missing = await t.http.get('/api/method/frappe.desk.form.load.get_docinfo').set(admin());
  expect(missing.status).toBe(400);
  expect(
    (await t.http.get('/api/method/frappe.desk.form.load.get_docinfo?doctype=Tracked Ledger')).status,
  ).toBe(401);
});

test('hostile or unknown arguments: an unknown DocType is 404, an over-long name 400, a list for a name 400', async () => {
  const ask = (query: Record<string, unknown>) =>
    t.http.get('/api/method/frappe.desk.form.load.get_docinfo').query(query).set(admin());
  expect((await ask({ doctype: 'No Such DocType', name: 'x' })).status).toBe(404);
  const long = await ask({ doctype: 'Tracked Ledger', name: 'x'.repeat(141) });
  expect(long.status).toBe(400);
  expect(long.body.exc_type).toBe('InvalidNameError');
  const list = await t.http
    .post('/api/method/frappe.desk.form.load.get_docinfo')
    .set(admin())
    .send({ doctype: 'Tracked Ledger', name: ['a', 'b'] });
  expect(list.status).toBe(400);
  // restore is Deleted Document's method only
  const doc = await createLedger(t);
  expect(
    (
      await t.http
        .post(`${path(doc.name)}/method/restore`)
        .set(admin())
        .send({})
    ).status,
  ).toBe(404);
});

test('a field taken out of the DocType since is in no version, for any reader', async () => {
  const doc = await createLedger(t, { lines: [{ item: 'a', qty: 1 }] });
  await t.http.put(path(doc.name)).set(admin()).send({ title: 'second' });
  // The version as it was written while the DocType still had `old_cost` (top level and in its rows).
  const versions = t.site.db.knex('tabVersion').where({ ref_doctype: 'Tracked Ledger', docname: doc.name });
  const [stored] = (await versions.clone().select('name', 'data')) as { name: string; data: string }[];
  const diff = JSON.parse(String(stored?.data));
  diff.changed.push(['old_cost', 10, 20]);
  diff.added = [['lines', { item: 'b', old_cost: 5, idx: 2 }]];
  await versions
    .clone()
    .where('name', stored?.name)
    .update({ data: JSON.stringify(diff) });
  for (const auth of [t.adminToken, reader]) {
    const [seen] = diffs((await docinfo(doc.name, auth)).body.message.versions);
    expect(seen.changed).toEqual([['title', 'first', 'second']]);
    expect(seen.added).toEqual([['lines', { item: 'b', idx: 2 }]]);
  }
});
