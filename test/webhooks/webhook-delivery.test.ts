// Webhook deliveries to a real receiver on loopback: both signatures (checked with the standardwebhooks package and
// with Frappe's formula), a 500 then a 200 (retried, same webhook-id), resend, the condition in the sandbox, form
// bodies, the JSON template, and no delivery for an import.
import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { DocumentTransaction } from '../../runtime/document/lifecycle';
import { ADMINISTRATOR, type SessionUser } from '../../runtime/site';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { createTodo, createWebhook, logRows, startReceiver, waitFor, type Receiver } from './receiver';

jest.setTimeout(30_000);

const SECRET = `whsec_${Buffer.from('a test key of thirty-two bytes!!').toString('base64')}`;

let t: TestSite;
let receiver: Receiver;

beforeEach(async () => {
  t = await createTestSite({
    site: { webhook_allowed_hosts: ['127.0.0.1'], webhook_retry_schedule: [0.2, 0.2], job_poll_ms: 50 },
  });
});

afterEach(async () => {
  await receiver?.close();
  await t.close();
});

it('signs with Standard Webhooks and Frappe, retries a 500 with the same webhook-id, then succeeds', async () => {
  receiver = await startReceiver(0, [500, 200]);
  const created = await createWebhook(t, {
    name: 'todo-created',
    request_url: receiver.url,
    enable_security: 1,
    webhook_secret: SECRET,
    webhook_headers: [{ key: 'X-Tenant', value: 'acme' }],
  });
  expect(created.status).toBe(201);
  expect(JSON.stringify(created.body)).not.toContain(SECRET.slice(6, 20));
  const todo = await createTodo(t, { description: 'signed' });
  await waitFor(() => receiver.requests.length >= 2, 10_000, 'two requests');
  const [first, second] = receiver.requests as [(typeof receiver.requests)[0], (typeof receiver.requests)[0]];
  for (const request of [first, second]) {
    const body = JSON.parse(request.body) as Record<string, unknown>;
    expect(body).toMatchObject({ doctype: 'ToDo', name: todo, description: 'signed' });
    expect(request.headers['x-tenant']).toBe('acme');
    expect(request.headers['content-type']).toBe('application/json');
    // The Standard Webhooks library verifies id, timestamp and signature (and throws when they do not match).
    expect(
      new StandardWebhook(SECRET).verify(request.body, request.headers as Record<string, string>),
    ).toEqual(body);
    const frappe = createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(request.body).digest('base64');
    expect(request.headers['x-frappe-webhook-signature']).toBe(frappe);
  }
  expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
  expect(() =>
    new StandardWebhook(SECRET).verify(`${first.body} `, first.headers as Record<string, string>),
  ).toThrow();
  await waitFor(async () => (await logRows(t)).some((r) => r.status === 'Success'), 5000, 'a Success row');
  const rows = await logRows(t);
  expect(rows.map((r) => [r.status, Number(r.attempts)])).toEqual([
    ['Failed', 1],
    ['Success', 2],
  ]);
  expect(rows[0]).toMatchObject({
    webhook: 'todo-created',
    reference_doctype: 'ToDo',
    reference_document: todo,
    error: 'HTTP 500',
  });
  expect(rows[0]?.next_retry).toBeTruthy();
  expect(new Set(rows.map((r) => r.message_id))).toEqual(new Set([first.headers['webhook-id']]));

  // resend: a new row, the same webhook-id, signed afresh
  const resent = await t.http
    .post(`/api/v2/document/Webhook Request Log/${String(rows[1]?.name)}/method/resend`)
    .set('Authorization', t.adminToken);
  expect(resent.status).toBe(200);
  await waitFor(() => receiver.requests.length >= 3, 5000, 'the resend');
  const third = receiver.requests[2] as typeof first;
  expect(third.headers['webhook-id']).toBe(first.headers['webhook-id']);
  expect(third.body).toBe(first.body);
  new StandardWebhook(SECRET).verify(third.body, third.headers as Record<string, string>);
  await waitFor(
    async () => (await logRows(t)).length === 3 && (await logRows(t))[2]?.status === 'Success',
    5000,
    'resent row',
  );
});

it('resends the delivery of a document deleted since (every on_trash delivery)', async () => {
  receiver = await startReceiver(0, [200]);
  expect(
    (await createWebhook(t, { name: 'trash', request_url: receiver.url, webhook_docevent: 'on_trash' }))
      .status,
  ).toBe(201);
  const todo = await createTodo(t);
  const deleted = await t.http.delete(`/api/resource/ToDo/${todo}`).set('Authorization', t.adminToken);
  expect(deleted.status).toBe(202);
  await waitFor(async () => (await logRows(t)).some((r) => r.status === 'Success'), 5000, 'delivery');
  const [row] = await logRows(t);
  expect(row?.reference_document).toBe(todo);
  const resent = await t.http
    .post(`/api/v2/document/Webhook Request Log/${String(row?.name)}/method/resend`)
    .set('Authorization', t.adminToken);
  expect(resent.status).toBe(200);
  await waitFor(() => receiver.requests.length >= 2, 5000, 'the resend');
  expect(receiver.requests[1]?.body).toBe(receiver.requests[0]?.body);
});

it('refuses a user edit of a log row, and a log row that repeats nothing logged', async () => {
  receiver = await startReceiver(0, [200]);
  expect((await createWebhook(t, { name: 'w', request_url: receiver.url })).status).toBe(201);
  await createTodo(t);
  await waitFor(async () => (await logRows(t)).some((r) => r.status === 'Success'), 5000, 'delivery');
  const [row] = await logRows(t);
  const edit = await t.http
    .put(`/api/resource/Webhook Request Log/${String(row?.name)}`)
    .set('Authorization', t.adminToken)
    .send({ url: 'http://10.0.0.1/' });
  expect(edit.status).toBe(400);
  const forged = await t.http
    .post('/api/resource/Webhook Request Log')
    .set('Authorization', t.adminToken)
    .send({ url: 'http://127.0.0.1:1/', data: '{}', message_id: 'msg_forged' });
  expect(forged.status).toBe(400);
  expect((await logRows(t)).map((r) => r.url)).toEqual([receiver.url]);
});

it('fires only when the condition holds, with the JSON template rendered safely', async () => {
  receiver = await startReceiver(0, [200]);
  const res = await createWebhook(t, {
    name: 'urgent',
    request_url: receiver.url,
    condition: 'doc.priority === "High" && doc.description.includes("fire")',
    request_structure: 'JSON',
    webhook_json:
      '{"id": "{{ doc.name }}", "text": "says: {{ doc.description }}", "prio": {{ doc.priority }}, "missing": {{ doc.nothing }}}',
  });
  expect(res.status).toBe(201);
  await createTodo(t, { description: 'calm', priority: 'High' });
  const hot = await createTodo(t, { description: 'fire "quoted" \\ here', priority: 'High' });
  await createTodo(t, { description: 'fire', priority: 'Low' });
  await waitFor(() => receiver.requests.length >= 1, 5000, 'the delivery');
  await new Promise((r) => setTimeout(r, 300));
  expect(receiver.requests).toHaveLength(1);
  expect(JSON.parse(receiver.requests[0]?.body ?? '')).toEqual({
    id: hot,
    text: 'says: fire "quoted" \\ here',
    prio: 'High',
    missing: null,
  });
});

it('refuses a condition that writes: nothing written or sent, the log row says why', async () => {
  receiver = await startReceiver(0, [200]);
  const res = await createWebhook(t, {
    name: 'writer',
    request_url: receiver.url,
    condition: 'frappe.db.set_value("ToDo", doc.name, "description", "changed") || true',
  });
  expect(res.status).toBe(201);
  const created = await t.http
    .post('/api/v2/document/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'kept' });
  expect(created.status).toBe(201);
  const name = created.body.data.name as string;
  await t.http.delete('/api/resource/Webhook/writer').set('Authorization', t.adminToken);
  expect((await t.site.db.knex('tabToDo').where({ name }).first()).description).toBe('kept');
  const row = (await logRows(t)).find((r) => r.reference_document === name);
  expect(row).toMatchObject({
    status: 'Failed',
    error: "Not sent: frappe.db.set_value writes: a webhook's condition may only read",
  });
  expect(receiver.requests).toHaveLength(0);
});

it('sends Form URL-Encoded bodies from webhook_data', async () => {
  receiver = await startReceiver(0, [200]);
  const res = await createWebhook(t, {
    name: 'form',
    request_url: receiver.url,
    request_method: 'PUT',
    request_structure: 'Form URL-Encoded',
    webhook_data: [
      { fieldname: 'name', key: 'id' },
      { fieldname: 'description', key: 'text' },
    ],
  });
  expect(res.status).toBe(201);
  const todo = await createTodo(t, { description: 'a & b' });
  await waitFor(() => receiver.requests.length >= 1, 5000, 'the delivery');
  const [request] = receiver.requests;
  expect(request?.method).toBe('PUT');
  expect(request?.headers['content-type']).toBe('application/x-www-form-urlencoded');
  expect(Object.fromEntries(new URLSearchParams(request?.body))).toEqual({ id: todo, text: 'a & b' });
});

it('fires on_update, on_change and on_trash at their events, and nothing for an import', async () => {
  receiver = await startReceiver(0, [200]);
  for (const event of ['on_update', 'on_change', 'on_trash'])
    expect(
      (await createWebhook(t, { name: event, webhook_docevent: event, request_url: receiver.url })).status,
    ).toBe(201);
  const todo = await createTodo(t);
  await t.http
    .put(`/api/resource/ToDo/${todo}`)
    .set('Authorization', t.adminToken)
    .send({ description: 'edited' });
  await t.http.delete(`/api/resource/ToDo/${todo}`).set('Authorization', t.adminToken);
  const admin: SessionUser = { name: ADMINISTRATOR, roles: new Set(['Administrator', 'System Manager']) };
  const tx = new DocumentTransaction(t.site, admin);
  tx.flags.inImport = true;
  await tx.newDoc('ToDo', { description: 'imported' }).insert();
  await waitFor(() => receiver.requests.length >= 5, 5000, 'five deliveries');
  await new Promise((r) => setTimeout(r, 300));
  const rows = await logRows(t);
  // insert: on_update; save: on_update and on_change; delete: on_trash and on_change (Frappe's delete_doc runs it).
  // The import: none.
  expect(rows.map((r) => r.webhook).sort()).toEqual([
    'on_change',
    'on_change',
    'on_trash',
    'on_update',
    'on_update',
  ]);
  expect(receiver.requests).toHaveLength(5);
});
