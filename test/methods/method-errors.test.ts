// Errors from methods: a ValidationError is 400 with its message in `exception` and `_server_messages`; another
// AppError keeps its status; anything else is a generic 500 (details only in developer_mode).
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
let dev: TestSite;
beforeAll(async () => {
  const registry = await fixtureRegistry();
  t = await createTestSite({ registry });
  dev = await createTestSite({ registry, site: { developer_mode: true } });
});
afterAll(async () => {
  await t.close();
  await dev.close();
});

const serverMessages = (body: { _server_messages: string }) =>
  (JSON.parse(body._server_messages) as string[]).map((m) => JSON.parse(m).message);

test.each([
  ['/api/method/widgets.widget.widget.fail', 1],
  ['/api/v2/method/Widget/fail', 2],
] as const)('%s: a ValidationError is 400 with its message', async (path, version) => {
  const res = await t.http.post(path).set('Authorization', t.adminToken).send({ kind: 'validation' });
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toBe('ValidationError');
  expect(res.body.exception).toBe('ValidationError: Widget input is not acceptable');
  expect(serverMessages(res.body)).toEqual(['Widget input is not acceptable']);
  if (version === 2)
    expect(res.body.errors).toEqual([{ type: 'ValidationError', message: 'Widget input is not acceptable' }]);
  else expect(res.body.errors).toBeUndefined();
  expect(res.body.message).toBeUndefined();
  expect(res.body.data).toBeUndefined();
});

test('a PermissionError thrown by a method is 403', async () => {
  const res = await t.http
    .post('/api/v2/method/Widget/fail')
    .set('Authorization', t.adminToken)
    .send({ kind: 'permission' });
  expect(res.status).toBe(403);
  expect(res.body.exc_type).toBe('PermissionError');
});

test('any other exception is a generic 500: no message, no stack, no path', async () => {
  const res = await t.http
    .post('/api/v2/method/Widget/fail')
    .set('Authorization', t.adminToken)
    .send({ kind: 'crash' });
  expect(res.status).toBe(500);
  expect(res.body.exc_type).toBe('InternalServerError');
  expect(JSON.stringify(res.body)).not.toContain('secret');
  expect(res.body.exc).toBeUndefined();
});

test('developer_mode shows the details of a 500', async () => {
  const res = await dev.http
    .post('/api/v2/method/Widget/fail')
    .set('Authorization', dev.adminToken)
    .send({ kind: 'crash' });
  expect(res.status).toBe(500);
  expect(res.body.exc).toContain('internal detail: /srv/secret.sql');
});
