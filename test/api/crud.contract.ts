// The CRUD and permission contract every API version answers (CONTRACT.md §6); run by v1.test.ts and v2.test.ts.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { countRows, expectErrorBody, type ApiVersion } from './api-version';

/** Registers the CRUD contract tests for one API version (call inside a test file, at top level or in a describe). */
export function crudContract(api: ApiVersion): void {
  let t: TestSite;
  let plainUser: string;
  const admin = () => t.adminToken;
  const create = (doctype: string, body: object) =>
    t.http.post(api.collection(doctype)).set('Authorization', admin()).send(body);

  beforeAll(async () => {
    t = await createTestSite({ registry: await fixtureRegistry() });
    plainUser = await createUser(t, `plain-v${api.version}@example.com`, []);
  });
  afterAll(() => t.close());

  test('create answers 201 with the stored document', async () => {
    const res = await create('Widget', { title: 'created', qty: 3 });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      title: 'created',
      qty: 3,
      owner: 'Administrator',
      docstatus: 0,
      doctype: 'Widget',
    });
    for (const key of ['name', 'creation', 'modified']) expect(typeof res.body.data[key]).toBe('string');
    expect(await countRows(t, 'Widget', { name: res.body.data.name })).toBe(1);
  });

  test('get answers 200 with the same document the create returned', async () => {
    const { body } = await create('Widget', { title: 'fetched', notes: 'n' });
    const res = await t.http.get(api.item('Widget', body.data.name)).set('Authorization', admin());
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(body.data);
  });

  test('update answers 200, changes only the fields sent and moves modified', async () => {
    const { body } = await create('Widget', { title: 'before', qty: 2, notes: 'kept' });
    const res = await t.http
      .put(api.item('Widget', body.data.name))
      .set('Authorization', admin())
      .send({ qty: 5 });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      name: body.data.name,
      title: 'before',
      qty: 5,
      notes: 'kept',
      creation: body.data.creation,
    });
    expect(res.body.data.modified > body.data.modified).toBe(true);
    const stored = await t.http.get(api.item('Widget', body.data.name)).set('Authorization', admin());
    expect(stored.body.data).toEqual(res.body.data);
  });

  test('delete answers 202 "ok", then the document is 404', async () => {
    const { body } = await create('Widget', { title: 'doomed', parts: [{ part_name: 'p' }] });
    const res = await t.http.delete(api.item('Widget', body.data.name)).set('Authorization', admin());
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ data: 'ok' });
    const after = await t.http.get(api.item('Widget', body.data.name)).set('Authorization', admin());
    expect(after.status).toBe(404);
    expect(after.body.exc_type).toBe('DoesNotExistError');
    expect(await countRows(t, 'Widget Part', { parent: body.data.name })).toBe(0);
  });

  test('list answers 200 with 20 rows by default and pages without overlap', async () => {
    for (let i = 0; i < 25; i++) await create('Named By Hash', { title: `row ${i}` });
    const all = await t.http.get(api.collection('Named By Hash')).set('Authorization', admin());
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(20);
    const names: string[] = [];
    for (const [start, expected] of [
      [0, 10],
      [10, 10],
      [20, 5],
    ] as const) {
      const page = await t.http
        .get(api.collection('Named By Hash'))
        .query(api.page(start, 10))
        .set('Authorization', admin());
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(expected);
      if (api.version === 2) expect(page.body.has_next_page).toBe(start + 10 < 25);
      names.push(...(page.body.data as { name: string }[]).map((r) => r.name));
    }
    expect(new Set(names).size).toBe(25);
  });

  test('an unknown DocType is 404 DoesNotExistError on every operation', async () => {
    const calls = [
      t.http.get(api.collection('No Such Type')),
      t.http.post(api.collection('No Such Type')).send({ title: 'x' }),
      t.http.get(api.item('No Such Type', 'x')),
      t.http.put(api.item('No Such Type', 'x')).send({ title: 'x' }),
      t.http.delete(api.item('No Such Type', 'x')),
    ];
    for (const res of await Promise.all(calls.map((c) => c.set('Authorization', admin())))) {
      expect(res.status).toBe(404);
      expectErrorBody(res.body, api.version, 'DoesNotExistError');
    }
  });

  test('an unknown name is 404 on get, update and delete', async () => {
    const before = await countRows(t, 'Widget');
    for (const req of [
      t.http.get(api.item('Widget', 'no-such-widget')),
      t.http.put(api.item('Widget', 'no-such-widget')).send({ title: 'x' }),
      t.http.delete(api.item('Widget', 'no-such-widget')),
    ]) {
      const res = await req.set('Authorization', admin());
      expect(res.status).toBe(404);
      expectErrorBody(res.body, api.version, 'DoesNotExistError');
    }
    expect(await countRows(t, 'Widget')).toBe(before);
  });

  test('a name containing "/" is one name, raw or percent-encoded in the path', async () => {
    const res = await create('Named By Prompt', { name: `dir/v${api.version}/leaf`, title: 'slashed' });
    expect(res.status).toBe(201);
    expect(res.body.data.name).toBe(`dir/v${api.version}/leaf`);
    for (const path of [
      api.item('Named By Prompt', `dir/v${api.version}/leaf`),
      api.item('Named By Prompt', `dir%2Fv${api.version}%2Fleaf`),
    ]) {
      const got = await t.http.get(path).set('Authorization', admin());
      expect(got.status).toBe(200);
      expect(got.body.data).toMatchObject({ name: `dir/v${api.version}/leaf`, title: 'slashed' });
    }
  });

  test(`get ${api.version === 1 ? 'omits' : 'keeps'} fields whose value is null`, async () => {
    const { body } = await create('Widget', { title: 'sparse' });
    const res = await t.http.get(api.item('Widget', body.data.name)).set('Authorization', admin());
    for (const field of ['code', 'todo', 'due_date', 'payload']) {
      if (api.version === 1) expect(res.body.data).not.toHaveProperty(field);
      else expect(res.body.data[field]).toBeNull();
    }
  });

  test('without credentials every operation is 401 and changes nothing', async () => {
    const { body } = await create('Widget', { title: 'guarded' });
    const before = await countRows(t, 'Widget');
    for (const req of [
      t.http.get(api.collection('Widget')),
      t.http.post(api.collection('Widget')).send({ title: 'guest' }),
      t.http.get(api.item('Widget', body.data.name)),
      t.http.put(api.item('Widget', body.data.name)).send({ title: 'guest' }),
      t.http.delete(api.item('Widget', body.data.name)),
    ]) {
      const res = await req;
      expect(res.status).toBe(401);
      expectErrorBody(res.body, api.version, 'AuthenticationError');
    }
    expect(await countRows(t, 'Widget')).toBe(before);
    expect(await countRows(t, 'Widget', { name: body.data.name, title: 'guarded' })).toBe(1);
  });

  test('a signed-in user without a role on the DocType gets 403 and changes nothing', async () => {
    const { body } = await create('Widget', { title: 'protected' });
    const before = await countRows(t, 'Widget');
    for (const req of [
      t.http.get(api.collection('Widget')),
      t.http.post(api.collection('Widget')).send({ title: 'intruder' }),
      t.http.get(api.item('Widget', body.data.name)),
      t.http.put(api.item('Widget', body.data.name)).send({ title: 'intruder' }),
      t.http.delete(api.item('Widget', body.data.name)),
    ]) {
      const res = await req.set('Authorization', plainUser);
      expect(res.status).toBe(403);
      expectErrorBody(res.body, api.version, 'PermissionError');
    }
    expect(await countRows(t, 'Widget')).toBe(before);
    expect(await countRows(t, 'Widget', { name: body.data.name, title: 'protected' })).toBe(1);
  });

  test('a validation error has exactly the contract members and no traceback', async () => {
    const res = await create('Widget', { title: 'bad', qty: -1 });
    expect(res.status).toBe(400);
    expectErrorBody(res.body, api.version, 'ValidationError');
    expect(res.body.exception).toContain('Quantity cannot be negative');
  });
}
