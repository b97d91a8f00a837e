// API scripts called with a session cookie: a call without the session's CSRF token (a GET a cross-site page can make
// the browser send; SameSite=Lax cookies ride top-level GETs) may read but not write (issue #36 item 5).
import { closeRateLimits } from '../../runtime/methods/rate-limit';
import { countRows, login, type LoggedIn } from '../auth/auth-helpers';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { apiScript } from './script-helpers';

let t: TestSite;
let session: LoggedIn;
let token: string;
const USER = 'csrf-scripts@example.com';
const WRITE = "frappe.new_doc('ToDo', { description: 'by script' }); frappe.response.message = 'wrote'";

beforeAll(async () => {
  t = await createTestSite();
  token = await createUser(t, USER, ['System Manager'], 'csrf-password-1');
  session = await login(t, USER, 'csrf-password-1');
  await apiScript(t, 'csrf.write', WRITE);
  await apiScript(
    t,
    'csrf.set',
    "frappe.db.set_value('User', frappe.session.user, 'first_name', 'Changed'); frappe.response.message = 'set'",
  );
  await apiScript(t, 'csrf.read', "frappe.response.message = frappe.db.count('ToDo')");
});
afterAll(async () => {
  await closeRateLimits(t.site);
  await t.close();
});

const firstName = async () =>
  ((await t.site.db.knex('tabUser').where('name', USER).first('first_name')) as { first_name: string })
    .first_name;

test('a session GET without the CSRF token cannot write through a script: 400 CSRFTokenError, nothing written', async () => {
  const todos = await countRows(t, 'tabToDo');
  const name = await firstName();
  for (const path of ['/api/method/csrf.write', '/api/v2/method/csrf.write', '/api/method/csrf.set']) {
    const res = await t.http.get(path).set('Cookie', session.cookie).set('Referer', 'https://evil.example/');
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe('CSRFTokenError');
  }
  expect(await countRows(t, 'tabToDo')).toBe(todos);
  expect(await firstName()).toBe(name);
});

test('a session POST without the token is refused before the script runs', async () => {
  const todos = await countRows(t, 'tabToDo');
  const res = await t.http.post('/api/method/csrf.write').set('Cookie', session.cookie).send({});
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toBe('CSRFTokenError');
  expect(await countRows(t, 'tabToDo')).toBe(todos);
});

test('a session GET of a script that only reads works without the token', async () => {
  const res = await t.http.get('/api/method/csrf.read').set('Cookie', session.cookie);
  expect(res.status).toBe(200);
  expect(res.body.message).toBe(await countRows(t, 'tabToDo'));
});

test('with the CSRF token (any verb), or with API keys, a script writes', async () => {
  const todos = await countRows(t, 'tabToDo');
  const withToken = await t.http
    .get('/api/method/csrf.write')
    .set('Cookie', session.cookie)
    .set('X-Frappe-CSRF-Token', session.csrf);
  expect(withToken.status).toBe(200);
  const post = await t.http
    .post('/api/v2/method/csrf.write')
    .set('Cookie', session.cookie)
    .set('X-Svc-CSRF-Token', session.csrf)
    .send({});
  expect(post.status).toBe(200);
  const keys = await t.http.get('/api/method/csrf.write').set('Authorization', token);
  expect(keys.status).toBe(200);
  expect(await countRows(t, 'tabToDo')).toBe(todos + 3);
});

test('a wrong CSRF token on a GET counts as none', async () => {
  const todos = await countRows(t, 'tabToDo');
  const res = await t.http
    .get('/api/method/csrf.write')
    .set('Cookie', session.cookie)
    .set('X-Frappe-CSRF-Token', `${session.csrf}x`);
  expect(res.status).toBe(400);
  expect(await countRows(t, 'tabToDo')).toBe(todos);
});
