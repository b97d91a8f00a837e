// The bulk endpoints (SPEC 2.5, 4.2; security.md 6.4 #41): each item through the caller's normal document path in a
// savepoint of its own, per-item failures in `failed`, counts that add up; a malformed request is a 400 and changes nothing.
import { countRows } from './api-version';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let u1: string;
let u2: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  u1 = await createUser(t, 'u1@bulk.test', []);
  u2 = await createUser(t, 'u2@bulk.test', []);
});
afterAll(() => t.close());

const post = (path: string, auth: string, body: unknown) =>
  t.http
    .post(path)
    .set('Authorization', auth)
    .send(body as object);
const todo = async (auth: string, description: string): Promise<Record<string, any>> => {
  const res = await post('/api/v2/document/ToDo', auth, { description });
  expect(res.status).toBe(201);
  return res.body.data;
};
const stored = (name: string) => t.site.db.knex('tabToDo').where({ name }).first();
const adds = (r: Record<string, any>) => {
  expect(r.success_count + r.failure_count).toBe(r.total);
  expect(r.failed).toHaveLength(r.failure_count);
};

describe('bulk_update, one DocType', () => {
  test('good items are saved; refused, missing and malformed items fail alone and change nothing', async () => {
    const mine = await todo(u1, 'mine 1');
    const mine2 = await todo(u1, 'mine 2');
    const theirs = await todo(u2, 'theirs');
    const theirsBefore = await stored(theirs.name);
    const res = await post('/api/v2/document/ToDo/bulk_update', u1, {
      docs: [
        { name: mine.name, description: 'changed 1', status: 'Closed' },
        { name: theirs.name, description: 'hijacked' },
        { name: 'no-such-todo', description: 'x' },
        'not an object',
        { description: 'no name' },
        { name: { $ne: 1 }, description: 'operator name' },
        { name: mine2.name, "status`=1, owner='x": 'Closed', description: 'changed 2' },
        { name: mine.name, status: 'Nope' },
      ],
    });
    expect(res.status).toBe(200);
    const r = res.body.data;
    adds(r);
    expect(r.updated).toEqual([mine.name, mine2.name]);
    expect(r.total).toBe(8);
    expect(r.failed.map((f: any) => [f.name, f.doctype, f.error])).toEqual([
      [theirs.name, 'ToDo', 'PermissionError'],
      ['no-such-todo', 'ToDo', 'DoesNotExistError'],
      [null, 'ToDo', 'ValidationError'],
      [null, 'ToDo', 'ValidationError'],
      [null, 'ToDo', 'ValidationError'],
      [mine.name, 'ToDo', 'DataError'],
    ]);
    expect(r.failed[0].message).toBe(`No permission to write ToDo ${theirs.name}`);
    expect(r.failed[2].message).toBe("Each update must be a dictionary with 'name' and field values");
    expect(r.failed[4].message).toBe("'name' must be a string or integer");
    expect(res.body.docs).toEqual([
      expect.objectContaining({ name: mine.name, description: 'changed 1', status: 'Closed' }),
      expect.objectContaining({ name: mine2.name, description: 'changed 2' }),
    ]);
    expect(res.body.docs[0].modified).toEqual(expect.any(String));
    expect(await stored(theirs.name)).toEqual(theirsBefore);
    expect(await stored(mine.name)).toMatchObject({ description: 'changed 1', status: 'Closed' });
    expect(await stored(mine2.name)).toMatchObject({ description: 'changed 2', owner: 'u1@bulk.test' });
  });

  test('a stale `modified` fails that item (409 type); no `modified` means no check', async () => {
    const a = await todo(u1, 'a');
    const res = await post('/api/v2/document/ToDo/bulk_update', u1, {
      docs: [
        { name: a.name, description: 'stale', modified: '2000-01-01 00:00:00.000000' },
        { name: a.name, description: 'fresh', modified: a.modified },
        { name: a.name, description: 'unchecked' },
      ],
    });
    const r = res.body.data;
    adds(r);
    expect(r.failed.map((f: any) => f.error)).toEqual(['TimestampMismatchError']);
    expect(r.updated).toEqual([a.name, a.name]);
    expect((await stored(a.name)).description).toBe('unchecked');
  });

  test('hooks run per item: a hook that refuses one item rolls back only that item', async () => {
    const make = async (title: string) =>
      (await post('/api/v2/document/Widget', t.adminToken, { title, status: 'Active' })).body.data;
    const w1 = await make('w1');
    const w2 = await make('w2');
    const res = await post('/api/v2/document/Widget/bulk_update', t.adminToken, {
      docs: [
        { name: w1.name, title: 'fail:validate' },
        { name: w2.name, title: 'w2 renamed' },
      ],
    });
    const r = res.body.data;
    adds(r);
    expect(r.updated).toEqual([w2.name]);
    expect(r.failed[0]).toMatchObject({
      name: w1.name,
      error: 'ValidationError',
      message: 'validate refused fail:validate',
    });
    const rows = await t.site.db.knex('tabWidget').whereIn('name', [w1.name, w2.name]).orderBy('title');
    expect(rows.map((w: any) => w.title).sort()).toEqual(['w1', 'w2 renamed']);
  });

  test.each([
    [{}, 'ValidationError', "'docs' must be a list"],
    [{ docs: { name: 'x' } }, 'ValidationError', "'docs' must be a list"],
    [{ docs: 'x' }, 'ValidationError', "'docs' must be a list"],
    // The body parser refuses a body that is not an object, whatever the route.
    [[{ name: 'x' }], 'BadRequestError', 'The request body must be a JSON object'],
  ])('a malformed request %j is 400 and changes nothing', async (body, excType, message) => {
    const before = await countRows(t, 'ToDo');
    const res = await post('/api/v2/document/ToDo/bulk_update', u1, body);
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe(excType);
    expect(res.body.errors[0].message).toBe(message);
    expect(await countRows(t, 'ToDo')).toBe(before);
  });

  test('an unknown DocType is 404; a DocType without bulk operations is 405; GET .../bulk_update reads a document', async () => {
    expect((await post('/api/v2/document/Nope/bulk_update', u1, { docs: [] })).status).toBe(404);
    expect(
      (await post('/api/v2/document/Widget%20Settings/bulk_update', t.adminToken, { docs: [] })).status,
    ).toBe(405);
    const get = await t.http.get('/api/v2/document/ToDo/bulk_update').set('Authorization', u1);
    expect([get.status, get.body.exc_type]).toEqual([404, 'DoesNotExistError']);
  });

  test('Guest is refused with 401 before any item runs, on every bulk row', async () => {
    for (const path of [
      '/api/v2/document/ToDo/bulk_update',
      '/api/v2/document/ToDo/bulk_delete',
      '/api/v2/document/ToDo/bulk_insert',
      '/api/v2/method/bulk_update',
      '/api/v2/method/bulk_delete',
    ]) {
      const res = await t.http.post(path).send({ docs: [{ name: 'x' }], names: ['x'] });
      expect([path, res.status, res.body.exc_type]).toEqual([path, 401, 'AuthenticationError']);
    }
  });
});

describe('bulk_delete, one DocType', () => {
  test('deletes what the user may delete; other users’ and missing documents fail', async () => {
    const mine = await todo(u1, 'del mine');
    const theirs = await todo(u2, 'del theirs');
    const res = await post('/api/v2/document/ToDo/bulk_delete', u1, {
      names: [mine.name, theirs.name, 'no-such', 42, { $ne: 1 }, null],
    });
    expect(res.status).toBe(200);
    const r = res.body.data;
    adds(r);
    expect(r.deleted).toEqual([mine.name]);
    expect(r.failed.map((f: any) => [f.name, f.error])).toEqual([
      [theirs.name, 'PermissionError'],
      ['no-such', 'DoesNotExistError'],
      ['42', 'DoesNotExistError'],
      [null, 'ValidationError'],
      [null, 'ValidationError'],
    ]);
    expect(res.body.docs).toBeUndefined();
    expect(await stored(mine.name)).toBeUndefined();
    expect(await stored(theirs.name)).toBeDefined();
  });

  test('`names` not a list is 400', async () => {
    for (const body of [{}, { names: 'x' }, { docs: ['x'] }]) {
      const res = await post('/api/v2/document/ToDo/bulk_delete', u1, body);
      expect([res.status, res.body.errors?.[0]?.message]).toEqual([400, "'names' must be a list"]);
    }
  });
});

describe('across DocTypes', () => {
  test('bulk_update: each item names its DocType; unknown DocTypes and bad shapes fail alone', async () => {
    const a = await todo(t.adminToken, 'across a');
    const w = (await post('/api/v2/document/Widget', t.adminToken, { title: 'across w', status: 'Active' }))
      .body.data;
    const res = await post('/api/v2/method/bulk_update', t.adminToken, {
      docs: [
        { doctype: 'ToDo', name: a.name, description: 'across a2' },
        { doctype: 'Widget', name: w.name, title: 'across w2' },
        { doctype: 'Nope', name: 'x' },
        { doctype: 7, name: 'x' },
        { name: a.name, description: 'no doctype' },
        [],
      ],
    });
    expect(res.status).toBe(200);
    const r = res.body.data;
    adds(r);
    expect(r.updated).toEqual([
      { doctype: 'ToDo', name: a.name },
      { doctype: 'Widget', name: w.name },
    ]);
    expect(r.failed.map((f: any) => [f.doctype, f.error])).toEqual([
      ['Nope', 'DoesNotExistError'],
      [null, 'ValidationError'],
      [null, 'ValidationError'],
      [null, 'ValidationError'],
    ]);
    expect(res.body.docs.map((d: any) => [d.doctype, d.name])).toEqual([
      ['ToDo', a.name],
      ['Widget', w.name],
    ]);
    expect((await stored(a.name)).description).toBe('across a2');
  });

  test('bulk_update without a `docs` list is 400; bulk_delete without `docs` is an empty result', async () => {
    expect((await post('/api/v2/method/bulk_update', u1, {})).status).toBe(400);
    expect((await post('/api/v2/method/bulk_delete', u1, { docs: 'x' })).status).toBe(400);
    const res = await post('/api/v2/method/bulk_delete', u1, {});
    expect([res.status, res.body.data]).toEqual([
      200,
      { deleted: [], failed: [], total: 0, success_count: 0, failure_count: 0 },
    ]);
  });

  test('bulk_delete: permissions per item', async () => {
    const mine = await todo(u1, 'across del mine');
    const theirs = await todo(u2, 'across del theirs');
    const res = await post('/api/v2/method/bulk_delete', u1, {
      docs: [
        { doctype: 'ToDo', name: mine.name },
        { doctype: 'ToDo', name: theirs.name },
        { doctype: 'User', name: 'u2@bulk.test' },
        { name: mine.name },
        'ToDo',
      ],
    });
    const r = res.body.data;
    adds(r);
    expect(r.deleted).toEqual([{ doctype: 'ToDo', name: mine.name }]);
    expect(r.failed.map((f: any) => f.error)).toEqual([
      'PermissionError',
      'PermissionError',
      'ValidationError',
      'ValidationError',
    ]);
    expect(r.failed[2].message).toBe("Each document must be a dictionary with 'doctype' and 'name' keys");
    expect(await countRows(t, 'User', { name: 'u2@bulk.test' })).toBe(1);
    expect(await stored(theirs.name)).toBeDefined();
  });
});

describe('bulk_insert', () => {
  test('inserts each valid document as the caller; invalid ones fail alone', async () => {
    const before = await countRows(t, 'ToDo');
    const res = await post('/api/v2/document/ToDo/bulk_insert', u1, {
      docs: [{ description: 'ins 1' }, { status: 'Nope', description: 'bad' }, 5, { description: 'ins 2' }],
    });
    expect(res.status).toBe(200);
    const r = res.body.data;
    adds(r);
    expect(r.inserted).toHaveLength(2);
    expect(r.failed.map((f: any) => f.error)).toEqual(['DataError', 'ValidationError']);
    expect(await countRows(t, 'ToDo')).toBe(before + 2);
    for (const name of r.inserted) expect(await stored(name)).toMatchObject({ owner: 'u1@bulk.test' });
  });

  test('a user without create permission gets every item refused, nothing inserted', async () => {
    const before = await countRows(t, 'Widget');
    const res = await post('/api/v2/document/Widget/bulk_insert', u1, {
      docs: [{ title: 'x', status: 'Active' }],
    });
    expect([res.status, res.body.data.failed[0].error]).toEqual([200, 'PermissionError']);
    expect(await countRows(t, 'Widget')).toBe(before);
  });

  test('naming series stay gap-free: a failed item takes no number', async () => {
    const res = await post('/api/v2/document/Named%20By%20Naming%20Series/bulk_insert', t.adminToken, {
      docs: [
        { naming_series: 'ALT-.###', title: 'a' },
        { naming_series: 'NOPE-.#', title: 'b' },
        { naming_series: 'ALT-.###', title: 'c' },
      ],
    });
    const r = res.body.data;
    adds(r);
    const numbers = r.inserted.map((n: string) => Number(n.slice(4)));
    expect(numbers[1]).toBe(numbers[0] + 1);
  });
});

describe('frappe.client.insert_many and frappe.client.bulk_update (v1 methods)', () => {
  test('insert_many inserts every document in one transaction and returns the names', async () => {
    const before = await countRows(t, 'ToDo');
    const res = await post('/api/method/frappe.client.insert_many', u1, {
      docs: [
        { doctype: 'ToDo', description: 'many 1' },
        { doctype: 'ToDo', description: 'many 2' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.message).toHaveLength(2);
    expect(await countRows(t, 'ToDo')).toBe(before + 2);
    // JSON text, as form clients send it.
    const form = await t.http
      .post('/api/method/frappe.client.insert_many')
      .set('Authorization', u1)
      .type('form')
      .send({ docs: JSON.stringify([{ doctype: 'ToDo', description: 'many 3' }]) });
    expect([form.status, form.body.message.length]).toEqual([200, 1]);
  });

  test('insert_many is all or nothing: one bad document inserts none', async () => {
    const before = await countRows(t, 'ToDo');
    for (const docs of [
      [
        { doctype: 'ToDo', description: 'ok' },
        { doctype: 'ToDo', status: 'Nope' },
      ],
      [
        { doctype: 'ToDo', description: 'ok' },
        { doctype: 'Widget', title: 'not allowed', status: 'Active' },
      ],
      [{ doctype: 'ToDo', description: 'ok' }, 'x'],
      Array.from({ length: 201 }, (_, i) => ({ doctype: 'ToDo', description: `n${i}` })),
    ]) {
      const res = await post('/api/method/frappe.client.insert_many', u1, { docs });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(await countRows(t, 'ToDo')).toBe(before);
    }
    expect((await post('/api/method/frappe.client.insert_many', u1, { docs: 'x' })).status).toBe(400);
  });

  test('bulk_update saves each doc alone and lists the failed ones with their error', async () => {
    const mine = await todo(u1, 'fc mine');
    const theirs = await todo(u2, 'fc theirs');
    const res = await post('/api/method/frappe.client.bulk_update', u1, {
      docs: [
        { doctype: 'ToDo', docname: mine.name, description: 'fc changed', flags: { ignore_permissions: 1 } },
        { doctype: 'ToDo', docname: theirs.name, description: 'hijack' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.message).toEqual({
      failed_docs: [
        {
          doc: { doctype: 'ToDo', docname: theirs.name, description: 'hijack' },
          exc: `PermissionError: No permission to write ToDo ${theirs.name}`,
        },
      ],
    });
    expect((await stored(mine.name)).description).toBe('fc changed');
    expect((await stored(theirs.name)).description).toBe('fc theirs');
  });
});
