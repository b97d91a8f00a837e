// CSRF under session authentication: every cookie-authenticated POST/PUT/PATCH/DELETE carries the session's token.
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { countRows, login, type LoggedIn } from './auth-helpers';

let t: TestSite;
let s: LoggedIn;
let todo: string;
const USER = 'csrf-user@example.com';
const PASSWORD = 'csrf-password-1';
beforeAll(async () => {
  t = await createTestSite({ site: { allowed_referrers: ['https://trusted.example.com'] } });
  await createUser(t, USER, ['System Manager'], PASSWORD);
  s = await login(t, USER, PASSWORD);
  const res = await t.http
    .post('/api/resource/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'keep me' });
  todo = res.body.data.name;
});
afterAll(() => t.close());

const writes = (): [string, () => import('supertest').Test][] => [
  ['POST /api/resource/ToDo', () => t.http.post('/api/resource/ToDo').send({ description: 'csrf' })],
  [
    'PUT /api/resource/ToDo/x',
    () => t.http.put(`/api/resource/ToDo/${todo}`).send({ description: 'changed' }),
  ],
  [
    'PATCH /api/v2/document/ToDo/x',
    () => t.http.patch(`/api/v2/document/ToDo/${todo}`).send({ description: 'changed' }),
  ],
  ['DELETE /api/v2/document/ToDo/x', () => t.http.delete(`/api/v2/document/ToDo/${todo}`)],
  [
    'POST /api/method/frappe.auth.get_logged_user',
    () => t.http.post('/api/method/frappe.auth.get_logged_user'),
  ],
];

async function unchanged(): Promise<void> {
  const row = await t.site.db.knex('tabToDo').where('name', todo).first('description');
  expect(row).toEqual({ description: 'keep me' });
}

describe.each(writes())('%s with the session cookie', (_label, send) => {
  test('without a token → 400 CSRFTokenError, nothing changed', async () => {
    const before = await countRows(t, 'tabToDo');
    const res = await send().set('Cookie', s.cookie);
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe('CSRFTokenError');
    expect(await countRows(t, 'tabToDo')).toBe(before);
    await unchanged();
  });

  test('with a wrong token → 400', async () => {
    const res = await send().set('Cookie', s.cookie).set('X-Svc-CSRF-Token', 'f'.repeat(48));
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe('CSRFTokenError');
    await unchanged();
  });

  test("with another session's token → 400", async () => {
    const other = await login(t, USER, PASSWORD);
    const res = await send().set('Cookie', s.cookie).set('X-Svc-CSRF-Token', other.csrf);
    expect(res.status).toBe(400);
    await unchanged();
  });

  test('from a referrer not in allowed_referrers → 400', async () => {
    const res = await send().set('Cookie', s.cookie).set('Origin', 'https://trusted.example.com.evil.net');
    expect(res.status).toBe(400);
    await unchanged();
  });
});

test('the session token in X-Svc-CSRF-Token lets a write through', async () => {
  const res = await t.http
    .post('/api/resource/ToDo')
    .set('Cookie', s.cookie)
    .set('X-Svc-CSRF-Token', s.csrf)
    .send({ description: 'ok' });
  expect(res.status).toBe(201);
});

test('the Frappe spelling X-Frappe-CSRF-Token is accepted', async () => {
  const res = await t.http
    .post('/api/resource/ToDo')
    .set('Cookie', s.cookie)
    .set('X-Frappe-CSRF-Token', s.csrf)
    .send({ description: 'ok' });
  expect(res.status).toBe(201);
});

test('the form field csrf_token is accepted', async () => {
  const res = await t.http
    .post('/api/resource/ToDo')
    .set('Cookie', s.cookie)
    .type('form')
    .send({ description: 'form', csrf_token: s.csrf });
  expect(res.status).toBe(201);
});

test('a cross-site text/plain body with the cookie is refused and changes nothing', async () => {
  const before = await countRows(t, 'tabToDo');
  const res = await t.http
    .post('/api/resource/ToDo')
    .set('Cookie', s.cookie)
    .set('Content-Type', 'text/plain')
    .send('{"description":"x"}');
  expect([400, 415]).toContain(res.status);
  expect(await countRows(t, 'tabToDo')).toBe(before);
});

test('GET under a session needs no token', async () => {
  expect((await t.http.get(`/api/resource/ToDo/${todo}`).set('Cookie', s.cookie)).status).toBe(200);
});

test('token-authenticated writes need no CSRF token (F29)', async () => {
  const res = await t.http
    .post('/api/resource/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'by token' });
  expect(res.status).toBe(201);
});

test('an Origin listed in allowed_referrers skips the check', async () => {
  const res = await t.http
    .post('/api/resource/ToDo')
    .set('Cookie', s.cookie)
    .set('Origin', 'https://trusted.example.com')
    .send({ description: 'allowed' });
  expect(res.status).toBe(201);
});

test('a Referer under an allowed referrer skips the check', async () => {
  const res = await t.http
    .post('/api/resource/ToDo')
    .set('Cookie', s.cookie)
    .set('Referer', 'https://trusted.example.com/app/todo')
    .send({ description: 'allowed' });
  expect(res.status).toBe(201);
});

test('login itself needs no token', async () => {
  const res = await t.http
    .post('/api/method/login')
    .set('Cookie', s.cookie)
    .send({ usr: USER, pwd: PASSWORD });
  expect(res.status).toBe(200);
});

test('with site config ignore_csrf, session writes need no token', async () => {
  const other = await createTestSite({ site: { ignore_csrf: true } });
  try {
    await createUser(other, USER, ['System Manager'], PASSWORD);
    const session = await login(other, USER, PASSWORD);
    const res = await other.http
      .post('/api/resource/ToDo')
      .set('Cookie', session.cookie)
      .send({ description: 'ignored' });
    expect(res.status).toBe(201);
  } finally {
    await other.close();
  }
});
