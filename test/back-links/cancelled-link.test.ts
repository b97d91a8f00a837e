// A submittable document may not link to a cancelled document of a submittable DocType (Frappe's CancelledLinkError,
// "Cannot link cancelled document"): its Links, Dynamic Links and child rows' links, on insert, save and submit. An
// amendment's amended_from, a DocType that is not submittable, and a cancel (which checks no links) are not refused.
import type { TestSite } from '../helpers/test-site';
import { create, createBackLinksSite } from './back-links-site';

let t: TestSite;
beforeAll(async () => {
  t = await createBackLinksSite();
});
afterAll(() => t.close());

let seq = 0;
const fresh = (prefix: string) => `L${prefix}-${++seq}`;
const auth = () => ({ Authorization: t.adminToken });
const move = (doctype: string, name: string, to: 'submit' | 'cancel') =>
  t.http.post(`/api/v2/document/${doctype}/${name}/method/${to}`).set(auth()).send({});
const post = (doctype: string, body: object) =>
  t.http.post(`/api/v2/document/${doctype}`).set(auth()).send(body);

/** A submitted Audit Task, cancelled; its title may ask its controller to ignore Audit Hashes on cancel. */
async function cancelledTask(title = 'x'): Promise<string> {
  const name = await create(t, 'Audit Task', { name: fresh('T'), title });
  expect((await move('Audit Task', name, 'submit')).status).toBe(200);
  expect((await move('Audit Task', name, 'cancel')).status).toBe(200);
  return name;
}

function expectRefused(res: { status: number; body: any }, message: string): void {
  expect([res.status, res.body.exc_type]).toEqual([400, 'CancelledLinkError']);
  expect(res.body.errors[0].message).toBe(message);
}

test('a Link, a Dynamic Link and a child row of a submittable document to a cancelled one are refused; nothing is stored', async () => {
  const task = await cancelledTask();
  const before = await t.site.db.knex('tabAudit Hash').count({ n: '*' }).first();
  expectRefused(
    await post('Audit Hash', { name: fresh('H'), task }),
    `Cannot link cancelled document: Task: ${task}`,
  );
  expectRefused(
    await post('Audit Hash', { name: fresh('H'), ref_type: 'Audit Task', ref_name: task }),
    `Cannot link cancelled document: Reference Name: ${task}`,
  );
  expectRefused(
    await post('Audit Hash', { name: fresh('H'), steps: [{}, { task }] }),
    `Cannot link cancelled document: Steps Row #2: Task: ${task}`,
  );
  expect(await t.site.db.knex('tabAudit Hash').count({ n: '*' }).first()).toEqual(before);
});

test('a save of a draft and a submit are refused too; a draft or submitted target is fine', async () => {
  const live = await create(t, 'Audit Task', { name: fresh('T') });
  const hash = await create(t, 'Audit Hash', { name: fresh('H'), task: live });
  const task = await cancelledTask();
  const saved = await t.http.put(`/api/v2/document/Audit Hash/${hash}`).set(auth()).send({ task });
  expectRefused(saved, `Cannot link cancelled document: Task: ${task}`);
  // The target cancelled after the link was made: the submit checks again.
  const later = await create(t, 'Audit Task', { name: fresh('T') });
  const linker = await create(t, 'Audit Hash', { name: fresh('H'), task: later });
  expect((await move('Audit Task', later, 'submit')).status).toBe(200);
  expect((await move('Audit Task', later, 'cancel')).status).toBe(200);
  expectRefused(await move('Audit Hash', linker, 'submit'), `Cannot link cancelled document: Task: ${later}`);
  expect((await move('Audit Hash', hash, 'submit')).status).toBe(200);
});

test('an amendment names its cancelled original; a DocType that is not submittable may link to it', async () => {
  const task = await cancelledTask();
  const amended = await post('Audit Task', { name: fresh('T'), amended_from: task });
  expect(amended.status).toBe(201);
  const set = await t.http
    .put('/api/v2/document/Audit Settings/Audit Settings')
    .set(auth())
    .send({ default_task: task });
  expect(set.status).toBe(200);
  await t.http.put('/api/v2/document/Audit Settings/Audit Settings').set(auth()).send({ default_task: null });
});

test('a submitted document whose target was cancelled (its controller ignoring it) can still be cancelled', async () => {
  const task = await create(t, 'Audit Task', { name: fresh('T'), title: 'ignore hashes' });
  expect((await move('Audit Task', task, 'submit')).status).toBe(200);
  const hash = await create(t, 'Audit Hash', { name: fresh('H'), task });
  expect((await move('Audit Hash', hash, 'submit')).status).toBe(200);
  expect((await move('Audit Task', task, 'cancel')).status).toBe(200);
  expect((await move('Audit Hash', hash, 'cancel')).status).toBe(200);
});
