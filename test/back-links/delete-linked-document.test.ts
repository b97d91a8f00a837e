// Deleting a document that another document links to (Frappe's check_if_doc_is_linked and
// check_if_doc_is_dynamically_linked): 400 LinkExistsError naming the linking document, nothing deleted, on every
// delete path. A Link of a parent or of a child row, a Dynamic Link, a Single's value and an amendment block; a
// cancelled linker's Dynamic Links, the document's own links and its own child rows, and the DocTypes Frappe ignores (ToDo) do not.
import type { TestSite } from '../helpers/test-site';
import { create, createBackLinksSite, exists, update } from './back-links-site';

let t: TestSite;
beforeAll(async () => {
  t = await createBackLinksSite();
});
afterAll(() => t.close());

let seq = 0;
/** A fresh name for this run. */
const fresh = (prefix: string) => `${prefix}-${++seq}`;
const auth = () => ({ Authorization: t.adminToken });

const task = (body: object = {}) => create(t, 'Audit Task', { name: fresh('T'), ...body });
const hash = (body: object) => create(t, 'Audit Hash', { name: fresh('H'), ...body });

/** Deletes through v2 (202 expected to succeed). */
const del = (doctype: string, name: string) =>
  t.http.delete(`/api/v2/document/${doctype}/${name}`).set(auth());

/** Submits or cancels through the v2 document method. */
async function move(doctype: string, name: string, to: 'submit' | 'cancel'): Promise<void> {
  const res = await t.http.post(`/api/v2/document/${doctype}/${name}/method/${to}`).set(auth()).send({});
  expect([to, res.status]).toEqual([to, 200]);
}

/** The Deleted Documents kept for `name` of `doctype`. */
const deletedRecords = (doctype: string, name: string) =>
  t.site.db.knex('tabDeleted Document').where({ deleted_doctype: doctype, deleted_name: name });

/** Expects `res` to be the refusal with `message`, in either API version's body. */
function expectRefused(res: { status: number; body: any }, message: string): void {
  expect([res.status, res.body.exc_type]).toEqual([400, 'LinkExistsError']);
  expect(res.body.exception).toBe(`LinkExistsError: ${message}`);
}

const PATHS: Record<string, (name: string) => Promise<{ status: number; body: any }>> = {
  'v1 DELETE': (name) => t.http.delete(`/api/resource/Audit Task/${name}`).set(auth()),
  'v2 DELETE': (name) => del('Audit Task', name),
  'frappe.client.delete': (name) =>
    t.http.post('/api/method/frappe.client.delete').set(auth()).send({ doctype: 'Audit Task', name }),
};

test.each(Object.keys(PATHS))(
  '%s: a Link from another document refuses the delete and changes nothing; without it the delete goes',
  async (path) => {
    const target = await task();
    const linker = await hash({ task: target });
    const refused = await PATHS[path]!(target);
    expectRefused(
      refused,
      `Cannot delete or cancel because Audit Task ${target} is linked with Audit Hash ${linker}`,
    );
    expect(await exists(t, 'Audit Task', target)).toBe(true);
    expect(await deletedRecords('Audit Task', target)).toHaveLength(0);
    // The linker still saves: its Link still finds the task.
    await update(t, 'Audit Hash', linker, { ref_type: null });
    expect((await del('Audit Hash', linker)).status).toBe(202);
    expect([200, 202]).toContain((await PATHS[path]!(target)).status);
    expect(await exists(t, 'Audit Task', target)).toBe(false);
  },
);

test('a Link in a child row refuses the delete, naming the parent document', async () => {
  const target = await task();
  const linker = await hash({ steps: [{}, { task: target }] });
  expectRefused(
    await del('Audit Task', target),
    `Cannot delete or cancel because Audit Task ${target} is linked with Audit Hash ${linker}`,
  );
  expect(await exists(t, 'Audit Task', target)).toBe(true);
});

test('a Dynamic Link refuses the delete: in a document, and in a child row (with its row)', async () => {
  const target = await task();
  const inDocument = await hash({ ref_type: 'Audit Task', ref_name: target });
  expectRefused(
    await del('Audit Task', target),
    `Cannot delete or cancel because Audit Task ${target} is linked with Audit Hash ${inDocument}`,
  );
  expect((await del('Audit Hash', inDocument)).status).toBe(202);
  const inRow = await hash({ steps: [{}, { ref_type: 'Audit Task', ref_name: target }] });
  expectRefused(
    await del('Audit Task', target),
    `Cannot delete or cancel because Audit Task ${target} is linked with Audit Hash ${inRow} at Row: 2`,
  );
  expect(await exists(t, 'Audit Task', target)).toBe(true);
});

test('a Dynamic Link to a document of another DocType with the same name does not refuse', async () => {
  const name = fresh('same');
  await task({ name });
  await create(t, 'Audit Team', { name });
  await hash({ ref_type: 'Audit Team', ref_name: name });
  expect((await del('Audit Task', name)).status).toBe(202);
});

test("a Single's Link value refuses the delete, naming the Single once", async () => {
  const target = await task();
  const single = '/api/v2/document/Audit Settings/Audit Settings';
  expect((await t.http.put(single).set(auth()).send({ default_task: target })).status).toBe(200);
  expectRefused(
    await del('Audit Task', target),
    `Cannot delete or cancel because Audit Task ${target} is linked with Audit Settings`,
  );
  expect((await t.http.put(single).set(auth()).send({ default_task: null })).status).toBe(200);
  expect((await del('Audit Task', target)).status).toBe(202);
});

test('a cancelled document cannot be deleted while its amendment exists', async () => {
  const original = await task();
  await move('Audit Task', original, 'submit');
  await move('Audit Task', original, 'cancel');
  const amendment = await create(t, 'Audit Task', { amended_from: original });
  expect(amendment).toBe(`${original}-1`);
  expectRefused(
    await del('Audit Task', original),
    `Cannot delete or cancel because Audit Task ${original} is linked with Audit Task ${amendment}`,
  );
  expect((await del('Audit Task', amendment)).status).toBe(202);
  expect((await del('Audit Task', original)).status).toBe(202);
});

test('a submitted linker refuses the delete; once cancelled, its Dynamic Links no longer do, its Links still do', async () => {
  const target = await task();
  const dynamic = await hash({
    ref_type: 'Audit Task',
    ref_name: target,
    steps: [{ ref_type: 'Audit Task', ref_name: target }],
  });
  const linker = await hash({ task: target, steps: [{ task: target }] });
  for (const name of [dynamic, linker]) await move('Audit Hash', name, 'submit');
  expect((await del('Audit Task', target)).status).toBe(400);
  await move('Audit Hash', dynamic, 'cancel');
  await move('Audit Hash', linker, 'cancel');
  expectRefused(
    await del('Audit Task', target),
    `Cannot delete or cancel because Audit Task ${target} is linked with Audit Hash ${linker}`,
  );
  expect((await del('Audit Hash', linker)).status).toBe(202);
  expect((await del('Audit Task', target)).status).toBe(202);
});

test("the document's own Links and its own child rows' do not refuse its delete", async () => {
  const target = await task();
  await update(t, 'Audit Task', target, {
    related_task: target,
    steps: [{ task: target }, { ref_type: 'Audit Task', ref_name: target }],
  });
  expect((await del('Audit Task', target)).status).toBe(202);
  expect(await exists(t, 'Audit Task', target)).toBe(false);
});

test('another document of the same DocType linking to it refuses the delete', async () => {
  const target = await task();
  const other = await task({ related_task: target });
  expectRefused(
    await del('Audit Task', target),
    `Cannot delete or cancel because Audit Task ${target} is linked with Audit Task ${other}`,
  );
});

test('a DocType Frappe ignores on delete (ToDo) does not refuse it', async () => {
  const target = await task();
  await create(t, 'ToDo', { description: 'follow up', reference_type: 'Audit Task', reference_name: target });
  expect((await del('Audit Task', target)).status).toBe(202);
});

test('a DocType with a disabled field: the refusal says to disable it instead', async () => {
  const team = await create(t, 'Audit Team', { name: fresh('team') });
  await hash({ team });
  expectRefused(await del('Audit Team', team), 'You can disable this Audit Team instead of deleting it.');
  expect(await exists(t, 'Audit Team', team)).toBe(true);
});
