// Custom key sources: Svc-Authorization-Source names a DocType with api_key, api_secret, user and enabled.
import { isKeySource, keySource } from '../../runtime/auth/key-sources';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { authRegistry } from './auth-registry';
import { countRows } from './auth-helpers';

let t: TestSite;
let remove: () => void;
const USER = 'client-owner@example.com';
const KEY = 'clientkey000001';
const SECRET = 'clientsecret001';
let clientName: string;
beforeAll(async () => {
  const generated = await authRegistry();
  remove = generated.remove;
  t = await createTestSite({ registry: generated.registry });
  await createUser(t, USER, ['System Manager']);
  const res = await t.http
    .post('/api/resource/API Client')
    .set('Authorization', t.adminToken)
    .send({ api_key: KEY, api_secret: SECRET, user: USER, enabled: 1 });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  clientName = res.body.data.name;
  await t.http
    .post('/api/resource/Half Key Source')
    .set('Authorization', t.adminToken)
    .send({ api_key: KEY, api_secret: SECRET, user: 'Administrator', enabled: 1 })
    .expect(201);
}, 120_000);
afterAll(async () => {
  await t.close();
  remove();
});

const whoAmI = (
  source: string,
  authorization = `token ${KEY}:${SECRET}`,
  header = 'Svc-Authorization-Source',
) =>
  t.http
    .get('/api/method/frappe.auth.get_logged_user')
    .set(header, source)
    .set('Authorization', authorization);

test('key and secret checked against the named DocType; the request runs as its user', async () => {
  const res = await whoAmI('API Client');
  expect(res.status).toBe(200);
  expect(res.body.message).toBe(USER);
});

test('the Frappe spelling Frappe-Authorization-Source is accepted', async () => {
  const res = await whoAmI('API Client', `token ${KEY}:${SECRET}`, 'Frappe-Authorization-Source');
  expect(res.body.message).toBe(USER);
});

test('Basic credentials work with a key source too', async () => {
  const res = await whoAmI('API Client', `Basic ${Buffer.from(`${KEY}:${SECRET}`).toString('base64')}`);
  expect(res.status).toBe(200);
});

test('the same key without the header is looked up in User (and is unknown there)', async () => {
  const res = await t.http
    .get('/api/method/frappe.auth.get_logged_user')
    .set('Authorization', `token ${KEY}:${SECRET}`);
  expect(res.status).toBe(401);
});

test('a wrong secret → 401', async () => {
  expect((await whoAmI('API Client', `token ${KEY}:wrongsecret0001`)).status).toBe(401);
});

test.each([
  ['a DocType without the key fields', 'ToDo'],
  ['a DocType whose api_secret is not a Password field', 'Half Key Source'],
  ['DocType', 'DocType'],
  ['User Permission', 'User Permission'],
  ['a child table', 'Has Role'],
  ['a Single', 'System Settings'],
  ['SQL', 'User`; DROP TABLE tabUser; --'],
  ['a path', '../x'],
  ['a non-existent DocType', 'No Such DocType'],
  ['an overlong name', 'x'.repeat(5000)],
])('%s as key source → 401, never 500, nothing changed', async (_label, source) => {
  const before = await countRows(t, 'tabUser');
  const res = await whoAmI(source);
  expect(res.status).toBe(401);
  expect(res.body.exc_type).toBe('AuthenticationError');
  expect(await countRows(t, 'tabUser')).toBe(before);
});

test('a disabled row → 401 (and enabling it again works at once)', async () => {
  await t.http
    .put(`/api/resource/API Client/${clientName}`)
    .set('Authorization', t.adminToken)
    .send({ enabled: 0 })
    .expect(200);
  expect((await whoAmI('API Client')).status).toBe(401);
  await t.http
    .put(`/api/resource/API Client/${clientName}`)
    .set('Authorization', t.adminToken)
    .send({ enabled: 1 })
    .expect(200);
  expect((await whoAmI('API Client')).status).toBe(200);
});

test('a row whose user is disabled → 401', async () => {
  const email = 'disabled-owner@example.com';
  await createUser(t, email, ['System Manager']);
  await t.http
    .post('/api/resource/API Client')
    .set('Authorization', t.adminToken)
    .send({ api_key: 'clientkey000002', api_secret: SECRET, user: email, enabled: 1 })
    .expect(201);
  expect((await whoAmI('API Client', `token clientkey000002:${SECRET}`)).status).toBe(200);
  await t.http
    .put(`/api/resource/User/${email}`)
    .set('Authorization', t.adminToken)
    .send({ enabled: 0 })
    .expect(200);
  expect((await whoAmI('API Client', `token clientkey000002:${SECRET}`)).status).toBe(401);
});

test('isKeySource and keySource accept only DocTypes with the four typed fields', () => {
  const registry = t.site.registry;
  expect(isKeySource(registry.get('API Client')!)).toBe(true);
  expect(isKeySource(registry.get('Half Key Source')!)).toBe(false);
  expect(keySource(registry, '')).toBeUndefined();
  expect(keySource(registry, 'User')).toBeUndefined();
  expect(keySource(registry, 'API Client')?.meta.name).toBe('API Client');
  expect(keySource(registry, 'ToDo')).toBeNull();
});
