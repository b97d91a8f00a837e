// Auth hooks: app handlers that read the request and name its user; they run after the built-in methods.
import { createApp } from '../../runtime/app';
import type { AuthHook } from '../../runtime/auth/auth-hooks';
import { loadAuthHooks } from '../../runtime/auth/auth-hooks';
import request from 'supertest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { countRows, login } from './auth-helpers';

let t: TestSite;
let http: ReturnType<typeof request>;
const USER = 'hook-user@example.com';
const seen: { user: string; ip: string; path: string }[] = [];

/** Trusts `X-Gateway-User` when `X-Gateway-Secret` is right; `X-Gateway-Fail` makes the hook throw. */
const gatewayHook: AuthHook = (req) => {
  seen.push({ user: req.user, ip: req.ip, path: req.path });
  if (req.headers['x-gateway-fail']) throw new Error('gateway check failed: internal detail');
  if (req.headers['x-gateway-secret'] !== 'gateway-secret') return undefined;
  const name = req.headers['x-gateway-user'];
  return typeof name === 'string' ? name : undefined;
};
const neverHook: AuthHook = async () => undefined;

beforeAll(async () => {
  t = await createTestSite();
  await createUser(t, USER, ['System Manager'], 'hook-password-1');
  http = request(
    createApp(t.site, { authHooks: [neverHook, gatewayHook], onServerError: () => undefined }).callback(),
  );
});
afterAll(() => t.close());
beforeEach(() => {
  seen.length = 0;
});

const whoAmI = () => http.get('/api/method/frappe.auth.get_logged_user');

test('a hook that names a user makes the request run as that user', async () => {
  const res = await whoAmI().set('X-Gateway-Secret', 'gateway-secret').set('X-Gateway-User', USER);
  expect(res.status).toBe(200);
  expect(res.body.message).toBe(USER);
});

test('hook-authenticated writes need no CSRF token (no cookie involved)', async () => {
  const res = await http
    .post('/api/resource/ToDo')
    .set('X-Gateway-Secret', 'gateway-secret')
    .set('X-Gateway-User', USER)
    .send({ description: 'hooked' });
  expect(res.status).toBe(201);
  expect(res.body.data.owner).toBe(USER);
});

test('a hook that names nobody leaves a Guest (401 on a protected call)', async () => {
  expect((await whoAmI().set('X-Gateway-User', USER)).status).toBe(401);
});

test('a hook that throws → 401 AuthenticationError without its internal message, nothing changed', async () => {
  const before = await countRows(t, 'tabToDo');
  const res = await http.post('/api/resource/ToDo').set('X-Gateway-Fail', '1').send({ description: 'x' });
  expect(res.status).toBe(401);
  expect(res.body.exc_type).toBe('AuthenticationError');
  expect(JSON.stringify(res.body)).not.toContain('internal detail');
  expect(await countRows(t, 'tabToDo')).toBe(before);
  expect((await http.get('/api/method/ping').set('X-Gateway-Fail', '1')).status).toBe(401);
});

test('hooks run after the built-in methods and see their user', async () => {
  const res = await http.get('/api/method/frappe.auth.get_logged_user').set('Authorization', t.adminToken);
  expect(res.body.message).toBe('Administrator');
  expect(seen).toEqual([
    { user: 'Administrator', ip: expect.any(String), path: '/api/method/frappe.auth.get_logged_user' },
  ]);
});

test('a hook naming a different user than the token → 401', async () => {
  const res = await whoAmI()
    .set('Authorization', t.adminToken)
    .set('X-Gateway-Secret', 'gateway-secret')
    .set('X-Gateway-User', USER);
  expect(res.status).toBe(401);
});

test('a hook naming a different user than the session cookie → 401', async () => {
  const s = await login(t, 'Administrator', 'admin-test-password');
  const res = await whoAmI()
    .set('Cookie', s.cookie)
    .set('X-Gateway-Secret', 'gateway-secret')
    .set('X-Gateway-User', USER);
  expect(res.status).toBe(401);
});

test('a hook naming an unknown or disabled user → 401', async () => {
  expect(
    (await whoAmI().set('X-Gateway-Secret', 'gateway-secret').set('X-Gateway-User', 'nobody@example.com'))
      .status,
  ).toBe(401);
  const email = 'hook-disabled@example.com';
  await createUser(t, email, ['System Manager']);
  await t.http
    .put(`/api/resource/User/${email}`)
    .set('Authorization', t.adminToken)
    .send({ enabled: 0 })
    .expect(200);
  expect((await whoAmI().set('X-Gateway-Secret', 'gateway-secret').set('X-Gateway-User', email)).status).toBe(
    401,
  );
});

describe('loadAuthHooks', () => {
  const dir = path.resolve(__dirname, '../tmp', `hooks-${process.pid}`);
  beforeAll(() => mkdirSync(dir, { recursive: true }));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('reads authHooks from <dir>/hooks.ts', () => {
    const sub = path.join(dir, 'ok');
    mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, 'hooks.ts'), "export const authHooks = [() => 'Administrator'];\n");
    const hooks = loadAuthHooks(sub);
    expect(hooks).toHaveLength(1);
    expect(hooks[0]!({ headers: {}, method: 'GET', path: '/', ip: '127.0.0.1', user: 'Guest' })).toBe(
      'Administrator',
    );
  });

  test('no hooks.ts: no hooks', () => {
    expect(loadAuthHooks(path.join(dir, 'missing'))).toEqual([]);
  });

  test('an authHooks export that is not an array of functions fails at start', () => {
    const sub = path.join(dir, 'bad');
    mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, 'hooks.ts'), "export const authHooks = ['not a function'];\n");
    expect(() => loadAuthHooks(sub)).toThrow('authHooks must be an array of functions');
  });
});
