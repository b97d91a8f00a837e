// Whitelisted module functions over every endpoint form: v1 and v2 dotted paths, v2 DocType/fn; 404, 405, guests, messages.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let userToken: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  userToken = await createUser(t, 'caller@example.com', ['Probe Reader']);
});
afterAll(() => t.close());

const admin = () => ({ Authorization: t.adminToken });
const DOTTED = 'widgets.widget.widget';

test('GET the contract example by every path form: v1 `message`, v2 `data`, the same result', async () => {
  const forms = [
    [`/api/method/${DOTTED}.stock?sku=A1`, 'message'],
    [`/api/v1/method/${DOTTED}.stock?sku=A1`, 'message'],
    [`/api/v2/method/${DOTTED}.stock?sku=A1`, 'data'],
    ['/api/v2/method/Widget/stock?sku=A1', 'data'],
    ['/api/v2/method/Widget/stock/?sku=A1', 'data'],
  ] as const;
  for (const [path, key] of forms) {
    const res = await t.http.get(path).set(admin());
    expect([path, res.status]).toEqual([path, 200]);
    expect(res.body).toEqual({ [key]: { sku: 'A1', qty: 42 } });
  }
});

test('the v2 dotted path and the DocType short path give identical bodies (messages included)', async () => {
  const a = await t.http.post(`/api/v2/method/${DOTTED}.greet`).set(admin()).send({ name: 'Ann' });
  const b = await t.http.post('/api/v2/method/Widget/greet').set(admin()).send({ name: 'Ann' });
  expect(a.status).toBe(200);
  expect(b.status).toBe(200);
  expect(a.body).toEqual(b.body);
  expect(a.body).toEqual({ data: 'greeted', messages: [{ message: 'Hello Ann' }] });
});

test('messages a method adds appear as _server_messages in v1 on success', async () => {
  const res = await t.http.get(`/api/method/${DOTTED}.greet?name=Bo`).set(admin());
  expect(res.status).toBe(200);
  expect(res.body.message).toBe('greeted');
  expect(JSON.parse(res.body._server_messages).map((m: string) => JSON.parse(m).message)).toEqual([
    'Hello Bo',
  ]);
});

test('a function returning nothing answers 200 with no result key', async () => {
  for (const path of [`/api/method/${DOTTED}.nothing`, '/api/v2/method/Widget/nothing']) {
    const res = await t.http.post(path).set(admin());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
  }
});

test.each([
  [`/api/method/${DOTTED}.hidden`, 'an exported function that is not whitelisted'],
  ['/api/v2/method/Widget/hidden', 'the same by the short path'],
  [`/api/method/${DOTTED}.nope`, 'a missing function'],
  [`/api/method/${DOTTED}.default`, 'the controller class'],
  [`/api/method/${DOTTED}.hookCalls`, 'an exported value'],
  ['/api/method/Widget/stock?sku=x', 'the short path on v1 (v2 only)'],
  ['/api/v2/method/widget/stock?sku=x', 'a DocType name in the wrong case'],
  [`/api/method/${DOTTED.toUpperCase()}.stock?sku=x`, 'a dotted path in the wrong case'],
  ['/api/v2/method/Widget/bump', 'a document method called as a function'],
  ['/api/v2/method/Nothing/stock', 'an unknown DocType'],
  ['/api/v2/method/constructor', 'an Object.prototype name'],
  ['/api/v2/method/__proto__', '__proto__'],
  ['/api/method/..%2F..%2Fetc%2Fpasswd', 'a path traversal'],
  ['/api/v2/method/Widget%2F..%2Fstock?sku=x', 'a traversal inside the short path'],
  ['/api/method/widgets.widget.widget.stock%00?sku=x', 'a NUL byte'],
  [`/api/v2/method/${'x.'.repeat(3000)}y`, 'a 6,000-character name'],
])('%s is 404 (%s)', async (path) => {
  const res = await t.http.get(path).set(admin());
  expect(res.status).toBe(404);
  expect(res.body.exc_type).toBe('DoesNotExistError');
  expect(res.body.exception.length).toBeLessThan(300);
});

test('a verb outside the list is 405 with Allow, and the function does not run', async () => {
  const res = await t.http.post(`/api/method/${DOTTED}.stock`).set(admin()).send({ sku: 'A1' });
  expect(res.status).toBe(405);
  expect(res.body.exc_type).toBe('MethodNotAllowedError');
  expect(res.headers.allow).toBe('GET');
  const get = await t.http.get(`/api/v2/method/Widget/make_widget?title=by-get`).set(admin());
  expect(get.status).toBe(405);
  expect(get.headers.allow).toBe('POST');
  expect(await t.site.db.knex('tabWidget').where({ title: 'by-get' }).count({ n: '*' }).first()).toEqual({
    n: 0,
  });
});

test('without `methods`, GET, POST, PUT and DELETE are allowed and PATCH is not', async () => {
  for (const verb of ['get', 'post', 'put', 'delete'] as const) {
    const res = await t.http[verb](`/api/v2/method/Widget/echo?text=hi`).set(admin());
    expect([verb, res.status]).toEqual([verb, 200]);
  }
  const res = await t.http.patch('/api/v2/method/Widget/echo?text=hi').set(admin());
  expect(res.status).toBe(405);
  expect(res.headers.allow).toBe('GET, POST, PUT, DELETE');
});

test('guests: 401 unless the function allows guests', async () => {
  const refused = await t.http.get('/api/v2/method/Widget/stock?sku=A');
  expect(refused.status).toBe(401);
  expect(refused.body.exc_type).toBe('AuthenticationError');
  const allowed = await t.http.get('/api/v2/method/Widget/whoami');
  expect(allowed.status).toBe(200);
  expect(allowed.body.data).toBe('Guest');
});

test('a method runs as the caller: its operations are permission-checked (403, nothing created)', async () => {
  const res = await t.http
    .post('/api/v2/method/Widget/make_widget')
    .set('Authorization', userToken)
    .send({ title: 'not allowed' });
  expect(res.status).toBe(403);
  expect(res.body.exc_type).toBe('PermissionError');
  expect(await t.site.db.knex('tabWidget').where({ title: 'not allowed' }).count({ n: '*' }).first()).toEqual(
    { n: 0 },
  );
  const ok = await t.http.post('/api/v2/method/Widget/make_widget').set(admin()).send({ title: 'allowed' });
  expect(ok.status).toBe(200);
  expect(await t.site.db.knex('tabWidget').where({ name: ok.body.data }).first('title')).toEqual({
    title: 'allowed',
  });
});

test('a list inside a method sees what the caller may read', async () => {
  await t.http.post('/api/v2/document/Method Probe').set(admin()).send({ title: 'probe-list' }).expect(201);
  const res = await t.http.get('/api/v2/method/Method Probe/titles').set('Authorization', userToken);
  expect(res.status).toBe(200);
  expect(res.body.data).toContain('probe-list');
  const refused = await t.http
    .get('/api/v2/method/Method%20Probe/titles')
    .set('Authorization', await createUser(t, 'nobody@example.com', []));
  expect(refused.status).toBe(403);
});

test.each(['/api/method/', '/api/v1/method/', '/api/v2/method/'])(
  '%s with no method name is 404 on every verb',
  async (path) => {
    for (const verb of ['get', 'post', 'put', 'delete'] as const) {
      const res = await t.http[verb](path).set(admin());
      expect([verb, res.status, res.body.exc_type]).toEqual([verb, 404, 'DoesNotExistError']);
    }
  },
);

test('escapes in the method path are decoded: %2E is a dot, %2F a slash', async () => {
  for (const path of [
    `/api/method/widgets%2Ewidget.widget.stock?sku=A1`,
    '/api/v2/method/Widget%2Fstock?sku=A1',
  ]) {
    const res = await t.http.get(path).set(admin());
    expect([path, res.status]).toEqual([path, 200]);
  }
});

test.each(['/api/method/%', '/api/method/ping%E0%A4%A', '/api/v2/method/Widget%2Fstock%C0%AF'])(
  'a malformed escape in %s is 400',
  async (path) => {
    const res = await t.http.get(path).set(admin());
    expect(res.status).toBe(400);
    expect(res.body.exception).toMatch(/percent-encoding/);
  },
);
