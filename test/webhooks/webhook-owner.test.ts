// The document a webhook sends is the document as the webhook's owner may read it: never a Password value, and
// nothing at all once the owner is disabled.
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { createTodo, logRows, startReceiver, waitFor, type Receiver } from './receiver';

jest.setTimeout(30_000);

let t: TestSite;
let receiver: Receiver;

beforeEach(async () => {
  t = await createTestSite({ site: { webhook_allowed_hosts: ['127.0.0.1'], job_poll_ms: 50 } });
  receiver = await startReceiver(0, [200]);
});

afterEach(async () => {
  await receiver.close();
  await t.close();
});

it('sends no Password value of the document', async () => {
  const res = await t.http.post('/api/resource/Webhook').set('Authorization', t.adminToken).send({
    name: 'users',
    webhook_doctype: 'User',
    webhook_docevent: 'after_insert',
    request_url: receiver.url,
  });
  expect(res.status).toBe(201);
  await createUser(t, 'hooked@example.com', [], 'a-secret-password-1');
  await waitFor(() => receiver.requests.length >= 1, 5000, 'the delivery');
  const body = receiver.requests[0]?.body ?? '';
  expect(JSON.parse(body)).toMatchObject({ doctype: 'User', name: 'hooked@example.com' });
  expect(body).not.toContain('a-secret-password-1');
  expect(JSON.parse(body)).not.toHaveProperty('new_password');
});

it('fires nothing once its owner is disabled', async () => {
  const owner = await createUser(t, 'owner@example.com', ['System Manager']);
  const res = await t.http.post('/api/resource/Webhook').set('Authorization', owner).send({
    name: 'owned',
    webhook_doctype: 'ToDo',
    webhook_docevent: 'after_insert',
    request_url: receiver.url,
  });
  expect(res.status).toBe(201);
  await createTodo(t, { description: 'while enabled' });
  await waitFor(() => receiver.requests.length >= 1, 5000, 'the delivery');
  const disabled = await t.http
    .put('/api/resource/User/owner@example.com')
    .set('Authorization', t.adminToken)
    .send({ enabled: 0 });
  expect(disabled.status).toBe(200);
  // The webhook index is read again within a second (CHECK_MS): a save after it sees the owner disabled.
  await t.http.put('/api/resource/Webhook/owned').set('Authorization', t.adminToken).send({ timeout: 6 });
  await createTodo(t, { description: 'after disabling' });
  await new Promise((r) => setTimeout(r, 800));
  expect(receiver.requests).toHaveLength(1);
  expect((await logRows(t)).map((r) => r.reference_document)).toHaveLength(1);
});

it("uses its owner's roles as they are at the next save, not as remembered (no stale first delivery)", async () => {
  const owner = await createUser(t, 'loses-roles@example.com', ['System Manager']);
  const res = await t.http.post('/api/resource/Webhook').set('Authorization', owner).send({
    name: 'stale',
    webhook_doctype: 'ToDo',
    webhook_docevent: 'after_insert',
    request_url: receiver.url,
  });
  expect(res.status).toBe(201);
  await createTodo(t, { description: 'while a System Manager' });
  await waitFor(() => receiver.requests.length >= 1, 5000, 'the delivery');
  const stripped = await t.http
    .put('/api/resource/User/loses-roles@example.com')
    .set('Authorization', t.adminToken)
    .send({ roles: [] });
  expect(stripped.status).toBe(200);
  // Past the index's CHECK_MS, when a remembered index is still used once while it is read again.
  await new Promise((r) => setTimeout(r, 1200));
  await createTodo(t, { description: 'the owner may not read this' });
  await new Promise((r) => setTimeout(r, 800));
  expect(receiver.requests).toHaveLength(1);
  expect(await logRows(t)).toHaveLength(1);
});

it('sends only what its last editor may read too, and runs its condition as that editor', async () => {
  const created = await t.http.post('/api/resource/Webhook').set('Authorization', t.adminToken).send({
    name: 'admins',
    webhook_doctype: 'ToDo',
    webhook_docevent: 'after_insert',
    request_url: receiver.url,
  });
  expect(created.status).toBe(201);
  // A System Manager limited to ToDos allocated to itself edits the Administrator's webhook.
  const editor = await createUser(t, 'editor@example.com', ['System Manager']);
  const perm = await t.http
    .post('/api/resource/User Permission')
    .set('Authorization', t.adminToken)
    .send({ user: 'editor@example.com', allow: 'User', for_value: 'editor@example.com' });
  expect(perm.status).toBe(201);
  const edited = await t.http
    .put('/api/resource/Webhook/admins')
    .set('Authorization', editor)
    .send({ condition: "frappe.session.user === 'editor@example.com'" });
  expect(edited.status).toBe(200);
  await createTodo(t, { description: 'not for the editor', allocated_to: 'Administrator' });
  await createTodo(t, { description: 'for the editor', allocated_to: 'editor@example.com' });
  await waitFor(() => receiver.requests.length >= 1, 5000, 'the delivery');
  await new Promise((r) => setTimeout(r, 800));
  expect(receiver.requests.map((r) => JSON.parse(r.body).description)).toEqual(['for the editor']);
});
