// Typed method arguments: query (JSON values as JSON text), JSON body and form body; coercion, 400 naming the argument,
// unknown arguments dropped; ignore_permissions, flags and a `user` argument never change who runs or what is checked.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const admin = () => ({ Authorization: t.adminToken });
const ECHO = '/api/v2/method/Widget/echo';

test('query parameters are coerced to the declared types; JSON values arrive as JSON text', async () => {
  const res = await t.http
    .get(ECHO)
    .query({ text: 'hi', count: '3', flag: 'true', tags: '["a","b"]', meta: '{"a":"7"}', mode: 'fast' })
    .set(admin());
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual({
    text: 'hi',
    count: 3,
    flag: true,
    tags: ['a', 'b'],
    meta: { a: 7 },
    mode: 'fast',
  });
});

test('a JSON body and a form body give the same arguments', async () => {
  const json = await t.http
    .post(ECHO)
    .set(admin())
    .send({ text: 'hi', count: 3, tags: ['a'], meta: { a: 1 } });
  const form = await t.http
    .post(ECHO)
    .set(admin())
    .type('form')
    .send({ text: 'hi', count: '3', tags: '["a"]', meta: '{"a":1}' });
  expect(json.status).toBe(200);
  expect(form.status).toBe(200);
  expect(form.body).toEqual(json.body);
  expect(json.body.data).toEqual({ text: 'hi', count: 3, tags: ['a'], meta: { a: 1 } });
});

test('unknown arguments are dropped', async () => {
  const res = await t.http
    .post(ECHO)
    .set(admin())
    .send({ text: 'hi', extra: 1, meta: { a: 1, b: 2 } });
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual({ text: 'hi', meta: { a: 1 } });
});

test.each([
  [{}, 'Missing argument: text'],
  [{ text: 'x', count: 'many' }, 'Argument count: must be number'],
  [{ text: 'x', flag: 'perhaps' }, 'Argument flag: must be boolean'],
  [{ text: 'x', mode: 'warp' }, 'Argument mode: must be one of "fast", "slow"'],
  [{ text: 'x', tags: [{ $gt: '' }] }, 'Argument tags.0: must be string'],
  [{ text: 'x', meta: { a: 'NaN!' } }, 'Argument meta.a: must be number'],
  [{ text: 'x', meta: {} }, 'Missing argument: a'],
  [{ text: { $ne: 1 } }, 'Argument text: must be string'],
])('a wrong or missing argument %j is 400 naming it', async (body, message) => {
  const res = await t.http.post(ECHO).set(admin()).send(body);
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toBe('DataError');
  expect(res.body.exception).toContain(message);
  expect(JSON.parse(JSON.parse(res.body._server_messages)[0]).message).toContain(message);
});

test('broken JSON text in a query argument is 400 naming it', async () => {
  const res = await t.http.get(ECHO).query({ text: 'x', tags: '["a",' }).set(admin());
  expect(res.status).toBe(400);
  expect(res.body.exception).toContain('Argument tags: is not valid JSON');
});

test('a repeated query argument is 400', async () => {
  const res = await t.http.get(`${ECHO}?text=a&text=b`).set(admin());
  expect(res.status).toBe(400);
});

test('#56 user=Administrator, ignore_permissions and flags never change the acting user or the permission checks', async () => {
  const token = await createUser(t, 'plain@example.com', ['Probe Reader']);
  const who = await t.http
    .post('/api/v2/method/Widget/whoami')
    .set('Authorization', token)
    .send({ user: 'Administrator', ignore_permissions: 1, flags: { ignore_permissions: true } });
  expect(who.status).toBe(200);
  expect(who.body.data).toBe('plain@example.com');
  const guest = await t.http.get('/api/v2/method/Widget/whoami?user=Administrator&ignore_permissions=1');
  expect(guest.body.data).toBe('Guest');
  for (const body of [
    { title: 'sneak', ignore_permissions: 1 },
    { title: 'sneak', flags: { ignore_permissions: true } },
    { title: 'sneak', user: 'Administrator' },
  ]) {
    const res = await t.http.post('/api/v2/method/Widget/make_widget').set('Authorization', token).send(body);
    expect(res.status).toBe(403);
  }
  expect(await t.site.db.knex('tabWidget').where({ title: 'sneak' }).count({ n: '*' }).first()).toEqual({
    n: 0,
  });
});

test('ignore_permissions and flags never reach the function, even where it accepts any key', async () => {
  const res = await t.http
    .post(ECHO)
    .set(admin())
    .send({ text: 'x', ignore_permissions: 1, flags: { x: 1 } });
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual({ text: 'x' });
});

test('__proto__ and constructor keys pollute nothing', async () => {
  const res = await t.http
    .post(ECHO)
    .set(admin())
    .set('Content-Type', 'application/json')
    .send(
      '{"text":"x","__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},"meta":{"a":1,"__proto__":{"polluted":1}}}',
    );
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toBe('BadRequestError');
  const query = await t.http
    .get(`${ECHO}?text=x&__proto__=polluted&constructor=polluted&prototype=polluted`)
    .set(admin());
  expect(query.status).toBe(200);
  expect(query.body.data).toEqual({ text: 'x' });
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

test('hostile string values are passed as plain data, never interpreted', async () => {
  const values = [
    "x' OR 1=1 --",
    '<script>alert(1)</script>',
    '${process.exit(1)}',
    '../../etc/passwd',
    'a\u0000b',
  ];
  for (const text of values) {
    const res = await t.http.post(ECHO).set(admin()).send({ text });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ text });
  }
});

test('a JSON array body is not an argument object: 400', async () => {
  const res = await t.http.post(ECHO).set(admin()).send([1, 2]);
  expect(res.status).toBe(400);
});
