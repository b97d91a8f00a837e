// Who reads the API description (issue #36 item 16): by default signed-in users only, so a Guest learns no DocType,
// method or API script name from the OpenAPI documents; site config openapi_public opens them. /api/docs is never framed.
import { login } from '../auth/auth-helpers';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { apiScript } from '../scripts/script-helpers';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite();
  await apiScript(t, 'internal.payroll_export', 'frappe.response.message = 1');
});
afterAll(() => t.close());

const DOCUMENTS = ['/api/openapi.json', '/api/v1/openapi.json', '/api/v2/openapi.json'];

test('a Guest is 401 for every OpenAPI document and learns no script name', async () => {
  for (const url of DOCUMENTS) {
    const res = await t.http.get(url);
    expect(res.status).toBe(401);
    expect(res.body.exc_type).toBe('AuthenticationError');
    expect(res.text).not.toContain('payroll');
  }
});

test('a signed-in user (API key or session, any role) reads them, scripts included', async () => {
  const key = await createUser(t, 'reader@example.com', [], 'reader-password-1');
  const session = await login(t, 'reader@example.com', 'reader-password-1');
  for (const url of DOCUMENTS) {
    for (const res of [
      await t.http.get(url).set('Authorization', key),
      await t.http.get(url).set('Cookie', session.cookie),
    ]) {
      expect(res.status).toBe(200);
      expect(res.body.openapi).toBe('3.1.0');
    }
  }
  const v2 = await t.http.get('/api/v2/openapi.json').set('Authorization', key);
  expect(v2.body.paths['/api/v2/method/internal.payroll_export']).toBeDefined();
});

test('a Guest opening /api/docs is sent to the sign-in page; the page is never framed', async () => {
  const guest = await t.http.get('/api/docs?v=1');
  expect(guest.status).toBe(302);
  expect(guest.headers.location).toBe(`/login?redirect-to=${encodeURIComponent('/api/docs?v=1')}`);
  expect(guest.headers['x-frame-options']).toBe('DENY');
  const page = await t.http.get('/api/docs').set('Authorization', t.adminToken);
  expect(page.status).toBe(200);
  expect(page.headers['x-frame-options']).toBe('DENY');
  expect(page.headers['content-security-policy']).toBe("frame-ancestors 'none'");
  const asset = await t.http.get('/api/docs/docs.js');
  expect(asset.status).toBe(200);
  expect(asset.headers['x-frame-options']).toBe('DENY');
});

test('site config openapi_public: true serves Guests the documents and the page', async () => {
  const open = await createTestSite({ site: { openapi_public: true } });
  try {
    for (const url of DOCUMENTS) expect((await open.http.get(url)).status).toBe(200);
    const page = await open.http.get('/api/docs');
    expect(page.status).toBe(200);
    expect(page.headers['x-frame-options']).toBe('DENY');
  } finally {
    await open.close();
  }
});
