// Methods on documents: v1 `?run_method=` (GET/POST), v2 `/document/{dt}/{name}/method/{m}` (GET read, POST write),
// the built-ins submit and cancel, and run_doc_method on a document sent with the request.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let reader: string;
let writer: string;
let outsider: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  reader = await createUser(t, 'reader@example.com', ['Probe Reader']);
  writer = await createUser(t, 'writer@example.com', ['Probe Writer']);
  outsider = await createUser(t, 'outsider@example.com', []);
});
afterAll(() => t.close());

const admin = () => ({ Authorization: t.adminToken });
const probe = async (title: string) => {
  await t.http.post('/api/v2/document/Method Probe').set(admin()).send({ title, counter: 0 }).expect(201);
  return title;
};
const counter = async (title: string) =>
  Number((await t.site.db.knex('tabMethod Probe').where({ name: title }).first('counter')).counter);
const v2 = (name: string, m: string) => `/api/v2/document/Method Probe/${name}/method/${m}`;

test('v2 POST runs a write method: { data, docs: [doc] } with the saved document', async () => {
  const name = await probe('v2-post');
  const res = await t.http.post(v2(name, 'increment')).set('Authorization', writer).send({ step: 2 });
  expect(res.status).toBe(200);
  expect(res.body.data).toBe(2);
  expect(res.body.docs).toHaveLength(1);
  expect(res.body.docs[0]).toMatchObject({ name, counter: 2 });
  expect(await counter(name)).toBe(2);
});

test('v2 GET needs read permission; a reader may call a read method, not a POST-only one (405 with Allow)', async () => {
  const name = await probe('v2-get');
  const res = await t.http.get(v2(name, 'peek')).set('Authorization', reader);
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual({ title: name, counter: 0, user: 'reader@example.com' });
  const refused = await t.http.get(v2(name, 'increment')).set('Authorization', writer);
  expect(refused.status).toBe(405);
  expect(refused.headers.allow).toBe('POST');
  expect(await counter(name)).toBe(0);
});

test('POST needs write permission: a reader gets 403 and nothing changes', async () => {
  const name = await probe('no-write');
  for (const path of [v2(name, 'increment'), `/api/resource/Method Probe/${name}?run_method=increment`]) {
    const res = await t.http.post(path).set('Authorization', reader).send({ step: 5 });
    expect(res.status).toBe(403);
    expect(res.body.exc_type).toBe('PermissionError');
  }
  expect(await counter(name)).toBe(0);
});

test('a GET-callable method that saves is still checked as the caller: a reader cannot write through it', async () => {
  const name = await probe('sneaky');
  const res = await t.http.get(`${v2(name, 'sneaky_write')}?note=changed`).set('Authorization', reader);
  expect(res.status).toBe(403);
  expect((await t.site.db.knex('tabMethod Probe').where({ name }).first('note')).note ?? null).toBeNull();
});

test('a user who may not read the DocType gets the same answer for a real and a missing document', async () => {
  const name = await probe('hidden-probe');
  const real = await t.http.get(v2(name, 'peek')).set('Authorization', outsider);
  const missing = await t.http.get(v2('no-such-probe', 'peek')).set('Authorization', outsider);
  expect(real.status).toBe(missing.status);
  expect(real.body.exc_type).toBe(missing.body.exc_type);
});

test('v1 run_method: GET by query, POST by query or body, `data` holds the result', async () => {
  const name = await probe('v1-run');
  const get = await t.http
    .get(`/api/resource/Method Probe/${name}?run_method=peek`)
    .set('Authorization', reader);
  expect(get.status).toBe(200);
  expect(get.body.data).toMatchObject({ title: name });
  const byQuery = await t.http
    .post(`/api/resource/Method Probe/${name}?run_method=increment`)
    .set('Authorization', writer)
    .send({ step: 3 });
  expect(byQuery.status).toBe(200);
  expect(byQuery.body).toEqual({ data: 3 });
  const byBody = await t.http
    .post(`/api/v1/resource/Method Probe/${name}`)
    .set('Authorization', writer)
    .send({ run_method: 'increment', step: 1 });
  expect(byBody.status).toBe(200);
  expect(byBody.body.data).toBe(4);
});

test.each(['secret', 'save', 'delete', 'constructor', '__proto__', 'validate', 'on_update', 'nothing'])(
  'method %s that is not whitelisted is 404 on every form',
  async (m) => {
    const name = await probe(`nw-${m}`);
    for (const req of [
      t.http.post(v2(name, m)).set(admin()).send({}),
      t.http.get(v2(name, m)).set(admin()),
      t.http.post(`/api/resource/Method Probe/${name}?run_method=${m}`).set(admin()).send({}),
    ]) {
      const r = await req;
      expect(r.status).toBe(404);
      expect(r.body.exc_type).toBe('DoesNotExistError');
    }
    expect(await t.site.db.knex('tabMethod Probe').where({ name }).count({ n: '*' }).first()).toEqual({
      n: 1,
    });
  },
);

test('a method on a missing document is 404', async () => {
  const res = await t.http.post(v2('missing-probe', 'increment')).set(admin()).send({});
  expect(res.status).toBe(404);
});

test('document method arguments are validated like function arguments (400 naming it)', async () => {
  const name = await probe('args');
  const res = await t.http.post(v2(name, 'increment')).set(admin()).send({ step: 'lots' });
  expect(res.status).toBe(400);
  expect(res.body.exception).toContain('Argument step');
  expect(await counter(name)).toBe(0);
});

test('Widget.bump (the contract example) adds, saves and says so in messages', async () => {
  const created = await t.http
    .post('/api/v2/document/Widget')
    .set(admin())
    .send({ title: 'bumpable', qty: 1 });
  const name = created.body.data.name;
  const res = await t.http.post(`/api/v2/document/Widget/${name}/method/bump`).set(admin()).send({ by: 4 });
  expect(res.status).toBe(200);
  expect(res.body.data).toBe(5);
  expect(res.body.messages).toEqual([{ message: 'Bumped by 4' }]);
  const v1 = await t.http.post(`/api/resource/Widget/${name}?run_method=bump`).set(admin()).send({ by: 1 });
  expect(v1.body.data).toBe(6);
  expect(JSON.parse(v1.body._server_messages)).toHaveLength(1);
});

test('built-in submit and cancel on a submittable DocType (POST only)', async () => {
  const created = await t.http
    .post('/api/v2/document/Gadget Order')
    .set(admin())
    .send({ customer: 'method-submit', qty: 1, parts: [{ part_name: 'p' }] });
  const name = created.body.data.name;
  const url = (m: string) => `/api/v2/document/Gadget Order/${name}/method/${m}`;
  expect((await t.http.get(url('submit')).set(admin())).status).toBe(405);
  const submitted = await t.http.post(url('submit')).set(admin());
  expect(submitted.status).toBe(200);
  expect(submitted.body.docs[0].docstatus).toBe(1);
  const cancelled = await t.http.post(url('cancel')).set(admin());
  expect(cancelled.status).toBe(200);
  expect(cancelled.body.docs[0].docstatus).toBe(2);
  const notSubmittable = await t.http.post(v2(await probe('not-submittable'), 'submit')).set(admin());
  expect(notSubmittable.status).toBe(404);
});

describe('run_doc_method', () => {
  const call = (body: object, token = t.adminToken) =>
    t.http.post('/api/v2/method/run_doc_method').set('Authorization', token).send(body);

  test('runs on the document sent (not loaded): object or JSON text, kwargs as arguments', async () => {
    const asObject = await call({
      method: 'peek',
      document: { doctype: 'Method Probe', title: 'in-memory', counter: 9 },
    });
    expect(asObject.status).toBe(200);
    expect(asObject.body.data).toEqual({ title: 'in-memory', counter: 9, user: 'Administrator' });
    expect(asObject.body.docs[0]).toMatchObject({ title: 'in-memory', counter: 9 });
    const asText = await t.http
      .get('/api/v2/method/run_doc_method')
      .query({ method: 'peek', document: JSON.stringify({ doctype: 'Method Probe', title: 'as-text' }) })
      .set(admin());
    expect(asText.status).toBe(200);
    expect(asText.body.data.title).toBe('as-text');
    expect(
      await t.site.db.knex('tabMethod Probe').where({ name: 'in-memory' }).count({ n: '*' }).first(),
    ).toEqual({ n: 0 });
  });

  test('a stored document sent with changes: the method sees the changes; its save stores them', async () => {
    const name = await probe('rdm-stored');
    const res = await call({
      method: 'increment',
      document: { doctype: 'Method Probe', name, title: name, counter: 10 },
      kwargs: { step: 1 },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toBe(11);
    expect(await counter(name)).toBe(11);
  });

  test('#42 a forged document naming a stored one is checked against the stored one (403), a stale modified is 409', async () => {
    const name = await probe('rdm-forged');
    const forged = await call(
      {
        method: 'increment',
        document: { doctype: 'Method Probe', name, title: name, owner: 'reader@example.com' },
      },
      reader,
    );
    expect(forged.status).toBe(403);
    const admin = await call(
      { method: 'peek', document: { doctype: 'User', name: 'Administrator' } },
      reader,
    );
    expect([403, 404]).toContain(admin.status);
    const stale = await call({
      method: 'increment',
      document: { doctype: 'Method Probe', name, title: name, modified: '2000-01-01 00:00:00' },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.exc_type).toBe('TimestampMismatchError');
    expect(await counter(name)).toBe(0);
  });

  test('bad parameters are 400 naming them; unknown DocType or method 404; GET of a POST-only method 405', async () => {
    expect((await call({ document: { doctype: 'Method Probe' } })).body.exception).toContain(
      'Missing argument: method',
    );
    expect((await call({ method: 'peek' })).status).toBe(400);
    expect((await call({ method: 'peek', document: '{not json' })).status).toBe(400);
    expect((await call({ method: 'peek', document: { doctype: 'Method Probe' }, kwargs: [1] })).status).toBe(
      400,
    );
    expect((await call({ method: 'peek', document: { doctype: 'Nope' } })).status).toBe(404);
    expect((await call({ method: 'secret', document: { doctype: 'Widget', title: 'x' } })).status).toBe(404);
    const get = await t.http
      .get('/api/v2/method/run_doc_method')
      .query({ method: 'increment', document: JSON.stringify({ doctype: 'Method Probe', title: 'x' }) })
      .set(admin());
    expect(get.status).toBe(405);
  });

  test('v1 /api/method/run_doc_method: a stored document by dt and dn, the result in `message` beside `docs`', async () => {
    const name = await probe('rdm-v1');
    const res = await t.http
      .post('/api/method/run_doc_method')
      .set(admin())
      .send({ method: 'increment', dt: 'Method Probe', dn: name, args: { step: 3 } });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe(3);
    expect(res.body.docs[0]).toMatchObject({ name, counter: 3 });
    // Frappe's `arg` stands for `args` (as JSON text from a form post too).
    const viaArg = await t.http
      .post('/api/method/run_doc_method')
      .set(admin())
      .type('form')
      .send({ method: 'increment', dt: 'Method Probe', dn: name, arg: '{"step":2}' });
    expect([viaArg.status, viaArg.body.message]).toEqual([200, 5]);
    const missing = await t.http
      .post('/api/method/run_doc_method')
      .set(admin())
      .send({ method: 'increment', dt: 'Method Probe', dn: 'no-such-probe' });
    expect(missing.status).toBe(404);
    const forged = await t.http
      .post('/api/method/run_doc_method')
      .set('Authorization', reader)
      .send({ method: 'increment', dt: 'Method Probe', dn: name });
    expect(forged.status).toBe(403);
    expect(await counter(name)).toBe(5);
  });

  test('guests are refused with 401', async () => {
    const res = await t.http
      .post('/api/v2/method/run_doc_method')
      .send({ method: 'peek', document: { doctype: 'Method Probe', title: 'x' } });
    expect(res.status).toBe(401);
  });
});
