// Password fields are write-only: no response of any surface carries the value (or its hash), and the table holds only a mask.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
let widget: string;
const SECRET = 'correct-horse-battery-staple';
const SINGLE_SECRET = 'single-secret-value';

beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  const res = await t.http
    .post('/api/v2/document/Widget')
    .set('Authorization', t.adminToken)
    .send({ title: 'guarded', secret: SECRET });
  expect(res.status).toBe(201);
  widget = res.body.data.name;
  const single = await t.http
    .put('/api/v2/document/Widget Settings/Widget Settings')
    .set('Authorization', t.adminToken)
    .send({ api_password: SINGLE_SECRET });
  expect(single.status).toBe(200);
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });
const expectNoSecret = (body: unknown) => {
  const text = JSON.stringify(body);
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain(SINGLE_SECRET);
  expect(text).not.toMatch(/"(secret|api_password)"/);
};

test.each([
  ['v1 get', () => `/api/resource/Widget/${widget}`],
  ['v2 get', () => `/api/v2/document/Widget/${widget}`],
  ['v1 list', () => '/api/resource/Widget'],
  ['v2 list', () => '/api/v2/document/Widget'],
  ['v1 list fields=*', () => '/api/resource/Widget?fields=["*"]'],
  ['v2 list fields=*', () => '/api/v2/document/Widget?fields=["*"]'],
  ['v2 copy', () => `/api/v2/document/Widget/${widget}/copy`],
  ['v1 single', () => '/api/resource/Widget Settings/Widget Settings'],
  ['v2 single', () => '/api/v2/document/Widget Settings/Widget Settings'],
])('%s does not return the password field', async (_label, path) => {
  const res = await t.http.get(path()).set(auth());
  expect(res.status).toBe(200);
  expectNoSecret(res.body);
});

test('create and update responses do not return it either', async () => {
  const created = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'x', secret: SECRET });
  expect(created.status).toBe(201);
  expectNoSecret(created.body);
  const updated = await t.http
    .put(`/api/resource/Widget/${widget}`)
    .set(auth())
    .send({ secret: SECRET, qty: 3 });
  expect(updated.status).toBe(200);
  expectNoSecret(updated.body);
});

test.each([
  ['fields', '/api/v2/document/Widget?fields=["name","secret"]'],
  ['filters', '/api/v2/document/Widget?filters=[["secret","like","c%"]]'],
  ['order_by', '/api/resource/Widget?order_by=secret desc'],
  ['count filters', '/api/v2/doctype/Widget/count?filters={"secret":"x"}'],
])('naming it in %s is 403 PermissionError (no oracle on its value)', async (_label, path) => {
  const res = await t.http.get(path).set(auth());
  expect(res.status).toBe(403);
  expect(res.body.exc_type).toBe('PermissionError');
  expectNoSecret(res.body);
});

test('the document table holds a mask and the stored credential is not the plain text', async () => {
  const row = await t.site.db.knex('tabWidget').where({ name: widget }).first('secret');
  expect(row.secret).toMatch(/^\*+$/);
  const auth = await t.site.db
    .knex('__Auth')
    .where({ doctype: 'Widget', name: widget, fieldname: 'secret' })
    .first('password');
  expect(auth.password).toBeTruthy();
  expect(auth.password).not.toContain(SECRET);
  const singles = await t.site.db
    .knex('tabSingles')
    .where({ doctype: 'Widget Settings', field: 'api_password' })
    .first('value');
  expect(String(singles?.value ?? '')).not.toContain(SINGLE_SECRET);
});

test('the DocType meta describes the field but carries no value', async () => {
  const res = await t.http.get('/api/v2/doctype/Widget/meta').set(auth());
  expect(res.status).toBe(200);
  expect(JSON.stringify(res.body)).not.toContain(SECRET);
});
