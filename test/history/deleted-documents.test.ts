// Deleted Documents: every delete (v1, v2, frappe.client.delete, bulk_delete) keeps the document with its child rows
// in its own transaction; a failing delete keeps none; restore and bulk_restore insert the copy again through the
// normal insert path (permissions, same name, 409 when taken, the Link check) and mark it restored, all or nothing.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { createLedger, deletedOf, ledgerName } from './history-helpers';

let t: TestSite;
let clerk: string;
let auditor: string;
let restorer: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  clerk = await createUser(t, 'clerk-d@history.test', ['Ledger Clerk']);
  auditor = await createUser(t, 'auditor-d@history.test', ['System Manager']);
  restorer = await createUser(t, 'restorer-d@history.test', ['System Manager', 'Ledger Clerk']);
});
afterAll(() => t.close());

const admin = () => ({ Authorization: t.adminToken });
const path = (name: string) => `/api/v2/document/Tracked Ledger/${encodeURIComponent(name)}`;
const stored = (name: string) => t.site.db.knex('tabTracked Ledger').where({ name }).first();
const storedLines = (parent: string) => t.site.db.knex('tabTracked Ledger Line').where({ parent });
const restore = (deleted: string, auth = t.adminToken) =>
  t.http
    .post(`/api/v2/document/Deleted Document/${deleted}/method/restore`)
    .set('Authorization', auth)
    .send({});

describe('every delete keeps a Deleted Document with the child rows', () => {
  const paths: [string, (name: string) => Promise<{ status: number }>][] = [
    ['v1 DELETE', (n) => t.http.delete(`/api/resource/Tracked Ledger/${n}`).set(admin())],
    ['v2 DELETE', (n) => t.http.delete(path(n)).set(admin())],
    [
      'frappe.client.delete',
      (n) =>
        t.http
          .post('/api/method/frappe.client.delete')
          .set(admin())
          .send({ doctype: 'Tracked Ledger', name: n }),
    ],
    [
      'v2 bulk_delete',
      (n) =>
        t.http
          .post('/api/v2/document/Tracked Ledger/bulk_delete')
          .set(admin())
          .send({ names: [n] }),
    ],
  ];
  test.each(paths)('%s', async (_label, remove) => {
    const doc = await createLedger(t, { secret: 'kept-away', lines: [{ item: 'a', qty: 1 }, { item: 'b' }] });
    expect([200, 202]).toContain((await remove(doc.name)).status);
    expect(await stored(doc.name)).toBeUndefined();
    expect(await storedLines(doc.name)).toEqual([]);
    const [deleted, ...more] = await deletedOf(t, doc.name);
    expect(more).toEqual([]);
    expect(deleted).toMatchObject({ restored: 0, new_name: null, owner: 'Administrator' });
    expect(deleted?.data).toMatchObject({
      doctype: 'Tracked Ledger',
      name: doc.name,
      title: 'first',
      amount: 10,
      lines: [
        { doctype: 'Tracked Ledger Line', item: 'a', qty: 1, idx: 1, parent: doc.name },
        { doctype: 'Tracked Ledger Line', item: 'b', idx: 2 },
      ],
    });
    expect(JSON.stringify(deleted?.data)).not.toContain('secret');
  });
});

describe('a failing delete keeps nothing', () => {
  test('after_delete throws: the rows stay and no Deleted Document is written', async () => {
    const doc = await createLedger(t, { title: 'fail after delete', lines: [{ item: 'a' }] });
    const res = await t.http.delete(path(doc.name)).set(admin());
    expect(res.status).toBe(400);
    expect(await stored(doc.name)).toBeDefined();
    expect(await storedLines(doc.name)).toHaveLength(1);
    expect(await deletedOf(t, doc.name)).toEqual([]);
  });

  test('a refused delete keeps nothing', async () => {
    const doc = await createLedger(t);
    const reader = await createUser(t, 'reader-d@history.test', ['Ledger Reader']);
    expect((await t.http.delete(path(doc.name)).set('Authorization', reader)).status).toBe(403);
    expect(await deletedOf(t, doc.name)).toEqual([]);
  });
});

describe('restore', () => {
  test('puts the document back under its name with its rows, marks the Deleted Document, refuses a second time', async () => {
    const doc = await createLedger(t, { lines: [{ item: 'a', qty: 4 }] });
    await t.http.delete(path(doc.name)).set(admin());
    const [deleted] = (await deletedOf(t, doc.name)) as [any];
    const res = await restore(deleted.name, restorer);
    expect(res.status).toBe(200);
    expect(res.body.docs[0]).toMatchObject({ name: deleted.name, restored: 1, new_name: doc.name });
    expect(res.body.messages).toEqual([{ message: 'Document Restored' }]);
    const back = (await t.http.get(path(doc.name)).set(admin())).body.data;
    expect(back).toMatchObject({
      name: doc.name,
      title: 'first',
      amount: 10,
      owner: 'restorer-d@history.test',
    });
    expect(back.lines.map((l: any) => [l.item, l.qty, l.idx])).toEqual([['a', 4, 1]]);
    const again = await restore(deleted.name);
    expect(again.status).toBe(400);
    expect(again.body.exc_type).toBe('DocumentAlreadyRestored');
  });

  test('a name taken again is 409 and changes nothing', async () => {
    const doc = await createLedger(t);
    await t.http.delete(path(doc.name)).set(admin());
    await createLedger(t, { name: doc.name, title: 'newcomer' });
    const [deleted] = (await deletedOf(t, doc.name)) as [any];
    const res = await restore(deleted.name);
    expect(res.status).toBe(409);
    expect(res.body.exc_type).toBe('DuplicateEntryError');
    expect((await stored(doc.name)).title).toBe('newcomer');
    expect(await deletedOf(t, doc.name)).toMatchObject([{ restored: 0, new_name: null }]);
  });

  test('a Link target gone is the usual Link error; nothing is half-restored', async () => {
    const todo = (await t.http.post('/api/v2/document/ToDo').set(admin()).send({ description: 'target' }))
      .body.data;
    const doc = await createLedger(t, { lines: [{ item: 'a', todo: todo.name }] });
    await t.http.delete(path(doc.name)).set(admin());
    await t.http.delete(`/api/v2/document/ToDo/${todo.name}`).set(admin());
    const [deleted] = (await deletedOf(t, doc.name)) as [any];
    const res = await restore(deleted.name);
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe('LinkValidationError');
    expect(await stored(doc.name)).toBeUndefined();
    expect(await storedLines(doc.name)).toEqual([]);
    expect(await deletedOf(t, doc.name)).toMatchObject([{ restored: 0 }]);
  });

  test('permissions: the Deleted Document must be readable and the document creatable by the caller', async () => {
    const doc = await createLedger(t);
    await t.http.delete(path(doc.name)).set(admin());
    const [deleted] = (await deletedOf(t, doc.name)) as [any];
    // A clerk may create ledgers but not read Deleted Documents; a System Manager may read them but not create ledgers.
    expect([403, 404]).toContain((await restore(deleted.name, clerk)).status);
    const manager = await restore(deleted.name, auditor);
    expect(manager.status).toBe(403);
    expect(manager.body.exc_type).toBe('PermissionError');
    expect(await stored(doc.name)).toBeUndefined();
    expect(await deletedOf(t, doc.name)).toMatchObject([{ restored: 0 }]);
    expect((await restore('no-such-deleted-document')).status).toBe(404);
  });
});

describe('bulk_restore', () => {
  const bulkRestore = (docnames: unknown, auth = t.adminToken) =>
    t.http
      .post('/api/method/frappe.core.doctype.deleted_document.deleted_document.bulk_restore')
      .set('Authorization', auth)
      .send({ docnames });

  test('undoes a bulk delete; answers restored, invalid (restored already) and failed', async () => {
    const docs = [await createLedger(t), await createLedger(t), await createLedger(t)];
    const res = await t.http
      .post('/api/v2/document/Tracked Ledger/bulk_delete')
      .set(admin())
      .send({ names: docs.map((d) => d.name) });
    expect(res.status).toBe(200);
    const deleted = await Promise.all(docs.map(async (d) => ((await deletedOf(t, d.name)) as [any])[0].name));
    await restore(deleted[0]);
    await createLedger(t, { name: docs[2]?.name });
    const out = await bulkRestore(JSON.stringify([...deleted, 'no-such']));
    expect(out.status).toBe(200);
    expect(out.body.message).toEqual({
      restored: [deleted[1]],
      invalid: [deleted[0]],
      failed: [deleted[2], 'no-such'],
    });
    expect(await stored(docs[1]?.name)).toBeDefined();
  });

  test('a user who may not read Deleted Documents is refused; bad docnames are 400', async () => {
    expect((await bulkRestore(['x'], clerk)).status).toBe(403);
    const bad = await bulkRestore('not json');
    expect(bad.status).toBe(400);
    expect((await bulkRestore([{ $ne: 1 }])).status).toBe(400);
  });
});

test('a Deleted Document is read by System Manager through the REST API, and deleting one keeps no copy of it', async () => {
  const name = ledgerName();
  await createLedger(t, { name });
  await t.http.delete(path(name)).set(admin());
  const [deleted] = (await deletedOf(t, name)) as [any];
  const read = await t.http
    .get(`/api/v2/document/Deleted Document/${deleted.name}`)
    .set('Authorization', auditor);
  expect(read.status).toBe(200);
  expect(read.body.data).toMatchObject({
    deleted_doctype: 'Tracked Ledger',
    deleted_name: name,
    restored: 0,
  });
  expect(
    (await t.http.get(`/api/v2/document/Deleted Document/${deleted.name}`).set('Authorization', clerk))
      .status,
  ).toBe(403);
  expect((await t.http.delete(`/api/v2/document/Deleted Document/${deleted.name}`).set(admin())).status).toBe(
    202,
  );
  expect(await t.site.db.knex('tabDeleted Document').where({ deleted_name: deleted.name })).toEqual([]);
});

test('a bulk_delete whose one item fails keeps the copies of the others and none of the failed one', async () => {
  const good = await createLedger(t);
  const bad = await createLedger(t, { title: 'fail after delete' });
  const good2 = await createLedger(t);
  const res = await t.http
    .post('/api/v2/document/Tracked Ledger/bulk_delete')
    .set(admin())
    .send({ names: [good.name, bad.name, good2.name] });
  expect(res.status).toBe(200);
  expect(res.body.data.deleted).toEqual([good.name, good2.name]);
  expect(await deletedOf(t, good.name)).toHaveLength(1);
  expect(await deletedOf(t, good2.name)).toHaveLength(1);
  expect(await deletedOf(t, bad.name)).toEqual([]);
  expect(await stored(bad.name)).toBeDefined();
});

test("Frappe's module function restore (name) and run_doc_method restore as the document method does", async () => {
  const one = await createLedger(t);
  const two = await createLedger(t);
  await t.http.delete(path(one.name)).set(admin());
  await t.http.delete(path(two.name)).set(admin());
  const [first] = (await deletedOf(t, one.name)) as [any];
  const [second] = (await deletedOf(t, two.name)) as [any];
  const byFunction = await t.http
    .post('/api/method/frappe.core.doctype.deleted_document.deleted_document.restore')
    .set(admin())
    .send({ name: first.name });
  expect(byFunction.status).toBe(200);
  const byRunDocMethod = await t.http
    .post('/api/method/run_doc_method')
    .set(admin())
    .send({ method: 'restore', dt: 'Deleted Document', dn: second.name });
  expect(byRunDocMethod.status).toBe(200);
  expect(await stored(one.name)).toBeDefined();
  expect(await stored(two.name)).toBeDefined();
  expect(await deletedOf(t, one.name)).toMatchObject([{ restored: 1, new_name: one.name }]);
  expect(await deletedOf(t, two.name)).toMatchObject([{ restored: 1, new_name: two.name }]);
});
