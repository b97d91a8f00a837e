// frappe.publish_realtime from a Server Script, as Frappe's: to `user:<user>`, to a document's room, to `all` (every
// signed-in user's sockets, not Guests'), or to a room named; after_commit in a document event waits for the commit
// and sends nothing when it rolls back; bad arguments are a clear error and send nothing.
import type { Socket } from 'socket.io-client';
import { collect, startRealtime, until, type RealtimeTestServer } from './realtime-server';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { apiScript, saveScript } from '../scripts/script-helpers';

let t: TestSite;
let rt: RealtimeTestServer;
let alice: string;
let bob: string;

beforeAll(async () => {
  t = await createTestSite();
  alice = await createUser(t, 'alice@pub.test', ['System Manager']);
  bob = await createUser(t, 'bob@pub.test', ['System Manager']);
  rt = await startRealtime(t);
});
afterAll(async () => {
  await rt.close();
  await t.close();
});

const open = (headers: Record<string, string> = {}): Promise<Socket> => rt.open(headers);
const call = (method: string, body: Record<string, unknown> = {}) =>
  t.http.post(`/api/method/${method}`).set('Authorization', t.adminToken).send(body);
const settle = () => new Promise((r) => setTimeout(r, 300));

test('to a user, to every signed-in user, to a document room and to a named room', async () => {
  await apiScript(
    t,
    'pub_user',
    "frappe.publish_realtime('note', {text: frappe.form_dict.text}, {user: 'alice@pub.test'})",
  );
  await apiScript(t, 'pub_all', "frappe.publish_realtime('notice', 'to all')");
  await apiScript(t, 'pub_room', "frappe.publish_realtime('site_news', 'to the website', {room: 'website'})");
  await apiScript(
    t,
    'pub_doc',
    "frappe.publish_realtime('doc_note', 'about it', {doctype: 'ToDo', docname: frappe.form_dict.name})",
  );
  const a = await open({ Authorization: alice });
  const b = await open({ Authorization: bob });
  const guest = await open();
  const guestNews = collect(guest, 'site_news');
  const [aNote, bNote, aNotice, bNotice, guestNotice, bDoc] = [
    collect(a, 'note'),
    collect(b, 'note'),
    collect(a, 'notice'),
    collect(b, 'notice'),
    collect(guest, 'notice'),
    collect(b, 'doc_note'),
  ];
  expect((await call('pub_user', { text: 'hello' })).status).toBe(200);
  expect((await call('pub_all')).status).toBe(200);
  expect((await call('pub_room')).status).toBe(200);
  const todo = await t.http
    .post('/api/v2/document/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'd' });
  const name = todo.body.data.name as string;
  expect(await b.emitWithAck('doc_subscribe', 'ToDo', name)).toEqual({ ok: true });
  expect((await call('pub_doc', { name })).status).toBe(200);
  await until(
    () =>
      aNote.length === 1 &&
      aNotice.length === 1 &&
      bNotice.length === 1 &&
      bDoc.length === 1 &&
      guestNews.length === 1,
  );
  await settle();
  expect(aNote).toEqual([{ text: 'hello' }]);
  expect(bNote).toEqual([]);
  expect(guestNotice).toEqual([]);
  expect(bDoc).toEqual(['about it']);
  expect(guestNews).toEqual(['to the website']);
});

test('after_commit in a document event: sent after the commit, not at all when the save rolls back', async () => {
  await saveScript(t, {
    script_type: 'DocType Event',
    reference_doctype: 'ToDo',
    doctype_event: 'Before Save',
    script:
      "frappe.publish_realtime('saving', doc.description, {user: 'alice@pub.test', after_commit: true});\n" +
      "if (doc.description === 'refuse') frappe.throw('refused');",
  });
  const a = await open({ Authorization: alice });
  const saving = collect(a, 'saving');
  const ok = await t.http
    .post('/api/v2/document/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'kept' });
  expect(ok.status).toBe(201);
  const refused = await t.http
    .post('/api/v2/document/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'refuse' });
  expect(refused.status).toBe(400);
  await until(() => saving.length >= 1);
  await settle();
  expect(saving).toEqual(['kept']);
});

test.each([
  ['no event', 'frappe.publish_realtime()', /publish_realtime event/],
  ['an event that is not text', 'frappe.publish_realtime(42)', /publish_realtime event/],
  ['a user that is not text', "frappe.publish_realtime('e', 1, {user: {}})", /user must be/],
  ['options that are not an object', "frappe.publish_realtime('e', 1, 'all')", /options must be an object/],
  ['a message over 64 KiB', "frappe.publish_realtime('e', 'x'.repeat(70000))", /over 65536 bytes/],
])('%s is a clear error and sends nothing', async (_what, script, message) => {
  const method = `pub_bad_${Math.random().toString(36).slice(2, 8)}`;
  await apiScript(t, method, script);
  const a = await open({ Authorization: alice });
  const got = collect(a, 'e');
  const res = await call(method);
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  expect(JSON.stringify(res.body)).toMatch(message);
  await settle();
  expect(got).toEqual([]);
});
