// Server Scripts of type API: both method prefixes, GET and POST, allow_guest, disabled, the script's rate limit, a
// change taking effect on the next call, saving rules (System Manager, a script that compiles), server_script_enabled.
import { closeRateLimits } from '../../runtime/methods/rate-limit';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { apiScript, saveScript } from './script-helpers';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite();
});
afterAll(async () => {
  await closeRateLimits(t.site);
  await t.close();
});

const auth = () => ({ Authorization: t.adminToken });

test('an API script answers /api/method (message) and /api/v2/method (data), GET and POST', async () => {
  await apiScript(
    t,
    'greet',
    "frappe.response.message = 'hello ' + frappe.form_dict.who + ' from ' + frappe.session.user",
  );
  const v1 = await t.http.get('/api/method/greet?who=v1').set(auth());
  expect(v1.status).toBe(200);
  expect(v1.body.message).toBe('hello v1 from Administrator');
  const v2 = await t.http.post('/api/v2/method/greet').set(auth()).send({ who: 'v2' });
  expect(v2.status).toBe(200);
  expect(v2.body.data).toBe('hello v2 from Administrator');
});

test('a script without a message answers without a result key; structured results cross as JSON', async () => {
  await apiScript(t, 'silent', 'let x = 1;');
  const res = await t.http.get('/api/method/silent').set(auth());
  expect(res.status).toBe(200);
  expect(res.body).not.toHaveProperty('message');
  await apiScript(
    t,
    'structured',
    'frappe.response.message = { list: [1, "a", null, true], when: new Date(0) }',
  );
  expect((await t.http.get('/api/v2/method/structured').set(auth())).body.data).toEqual({
    list: [1, 'a', null, true],
    when: '1970-01-01T00:00:00.000Z',
  });
});

test('a changed script takes effect on the next call; a disabled one is gone (404)', async () => {
  const name = await apiScript(t, 'changing', "frappe.response.message = 'first'");
  expect((await t.http.get('/api/method/changing').set(auth())).body.message).toBe('first');
  const put = await t.http
    .put(`/api/resource/Server Script/${name}`)
    .set(auth())
    .send({ script: "frappe.response.message = 'second'" });
  expect(put.status).toBe(200);
  expect((await t.http.get('/api/method/changing').set(auth())).body.message).toBe('second');
  await t.http.put(`/api/resource/Server Script/${name}`).set(auth()).send({ disabled: 1 });
  const gone = await t.http.get('/api/method/changing').set(auth());
  expect(gone.status).toBe(404);
  await t.http.put(`/api/resource/Server Script/${name}`).set(auth()).send({ disabled: 0 });
  expect((await t.http.get('/api/method/changing').set(auth())).body.message).toBe('second');
  await t.http.delete(`/api/resource/Server Script/${name}`).set(auth());
  expect((await t.http.get('/api/method/changing').set(auth())).status).toBe(404);
});

test('Guest: 401 unless allow_guest (Guests are never 403); with allow_guest the script runs as Guest', async () => {
  await apiScript(t, 'members', "frappe.response.message = 'secret'");
  for (const path of ['/api/method/members', '/api/v2/method/members']) {
    const refused = await t.http.get(path);
    expect(refused.status).toBe(401);
    expect(refused.body.exc_type).toBe('AuthenticationError');
    expect(JSON.stringify(refused.body)).not.toContain('secret');
  }
  await apiScript(t, 'public', 'frappe.response.message = frappe.session.user', { allow_guest: 1 });
  const open = await t.http.get('/api/v2/method/public');
  expect(open.status).toBe(200);
  expect(open.body.data).toBe('Guest');
});

test("the script's rate limit: 429 with Retry-After once the count is spent", async () => {
  await apiScript(t, 'limited-script', 'frappe.response.message = 1', {
    enable_rate_limit: 1,
    rate_limit_count: 2,
    rate_limit_seconds: 60,
  });
  for (let i = 0; i < 2; i++)
    expect((await t.http.post('/api/method/limited-script').set(auth())).status).toBe(200);
  const res = await t.http.get('/api/v2/method/limited-script').set(auth());
  expect(res.status).toBe(429);
  expect(res.body.exc_type).toBe('TooManyRequestsError');
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
});

test('frappe.throw is a 400 ValidationError with its message', async () => {
  await apiScript(
    t,
    'refuse',
    "if (!frappe.form_dict.ok) frappe.throw('ok is required'); frappe.response.message = 1",
  );
  const res = await t.http.get('/api/method/refuse').set(auth());
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toBe('ValidationError');
  expect(res.body.exception).toContain('ok is required');
  expect((await t.http.get('/api/method/refuse?ok=1').set(auth())).status).toBe(200);
});

test('saving: a syntax error is a 400 naming line and column, and nothing is stored', async () => {
  const res = await t.http
    .post('/api/resource/Server Script')
    .set(auth())
    .send({ name: 'broken', script_type: 'API', api_method: 'broken', script: 'let a = 1;\nlet b = ;' });
  expect(res.status).toBe(400);
  expect(res.body.exception).toMatch(/SyntaxError at line 2, column \d+/);
  expect((await t.http.get('/api/resource/Server Script/broken').set(auth())).status).toBe(404);
  expect((await t.http.get('/api/method/broken').set(auth())).status).toBe(404);
});

test('saving: an API script needs an api_method that is not a built-in; other rights than System Manager are refused', async () => {
  const missing = await t.http
    .post('/api/resource/Server Script')
    .set(auth())
    .send({ name: 'no-method', script_type: 'API', script: '1' });
  expect(missing.status).toBe(400);
  const builtin = await t.http
    .post('/api/resource/Server Script')
    .set(auth())
    .send({ name: 'shadow', script_type: 'API', api_method: 'login', script: '1' });
  expect(builtin.status).toBe(400);
  expect(builtin.body.exception).toContain('built-in');
  const user = await createUser(t, 'scripter@example.com', ['All']);
  const refused = await t.http
    .post('/api/resource/Server Script')
    .set('Authorization', user)
    .send({ name: 'sneaky', script_type: 'API', api_method: 'sneaky', script: '1' });
  expect(refused.status).toBe(403);
  expect((await t.http.get('/api/method/sneaky').set(auth())).status).toBe(404);
});

test('server_script_enabled: false switches API scripts off (403 ServerScriptNotEnabled)', async () => {
  const off = await createTestSite({ site: { server_script_enabled: false } });
  try {
    await saveScript(off, { script_type: 'API', api_method: 'off', script: 'frappe.response.message = 1' });
    const res = await off.http.get('/api/method/off').set('Authorization', off.adminToken);
    expect(res.status).toBe(403);
    expect(res.body.exc_type).toBe('ServerScriptNotEnabled');
  } finally {
    await off.close();
  }
});

test('the served OpenAPI documents list the enabled API scripts as methods (v1 and v2)', async () => {
  await apiScript(t, 'documented', 'frappe.response.message = 1', { allow_guest: 1 });
  const v1 = await t.http.get('/api/openapi.json');
  expect(v1.status).toBe(200);
  expect(v1.body.paths['/api/method/documented'].get.tags).toEqual(['server scripts']);
  expect(v1.body.paths['/api/method/documented'].post.responses['200']).toBeDefined();
  expect(v1.body.paths['/api/method/ping']).toBeDefined();
  const v2 = await t.http.get('/api/v2/openapi.json');
  expect(v2.body.paths['/api/v2/method/documented'].get.security).toEqual([{}]);
  expect(v2.body.paths['/api/v2/method/greet'].post).toBeDefined();
});
