// Cancelling a submitted document that a submitted document links to (Frappe's check_no_back_links_exist, after
// on_cancel): 400 LinkExistsError naming the linking document, the document stays submitted, on both cancel paths.
// A draft or cancelled linker and the DocTypes the controller names in `ignore_linked_doctypes` do not stop it; a
// Single's Link does, as in Frappe.
import type { TestSite } from '../helpers/test-site';
import { create, createBackLinksSite } from './back-links-site';

let t: TestSite;
beforeAll(async () => {
  t = await createBackLinksSite();
});
afterAll(() => t.close());

let seq = 0;
const fresh = (prefix: string) => `C${prefix}-${++seq}`;
const auth = () => ({ Authorization: t.adminToken });

const task = (body: object = {}) => create(t, 'Audit Task', { name: fresh('T'), ...body });
const hash = (body: object) => create(t, 'Audit Hash', { name: fresh('H'), ...body });

/** Submits or cancels through the v2 document method. */
const move = (doctype: string, name: string, to: 'submit' | 'cancel') =>
  t.http.post(`/api/v2/document/${doctype}/${name}/method/${to}`).set(auth()).send({});

async function submitted(doctype: string, body: object): Promise<string> {
  const name = doctype === 'Audit Task' ? await task(body) : await hash(body);
  expect((await move(doctype, name, 'submit')).status).toBe(200);
  return name;
}

const docstatus = async (doctype: string, name: string) =>
  Number((await t.site.db.knex(`tab${doctype}`).where({ name }).first('docstatus'))?.docstatus);

function expectRefused(res: { status: number; body: any }, message: string): void {
  expect([res.status, res.body.exc_type]).toEqual([400, 'LinkExistsError']);
  expect(res.body.exception).toBe(`LinkExistsError: ${message}`);
}

const CANCELS: Record<string, (name: string) => Promise<{ status: number; body: any }>> = {
  'v2 cancel method': (name) => move('Audit Task', name, 'cancel'),
  'v1 PUT docstatus 2': (name) =>
    t.http.put(`/api/resource/Audit Task/${name}`).set(auth()).send({ docstatus: 2 }),
};

test.each(Object.keys(CANCELS))(
  '%s: a submitted document linking refuses the cancel and changes nothing; once it is cancelled, the cancel goes',
  async (path) => {
    const target = await submitted('Audit Task', {});
    const linker = await submitted('Audit Hash', { task: target });
    expectRefused(
      await CANCELS[path]!(target),
      `Cannot delete or cancel because Audit Task ${target} is linked with Audit Hash ${linker}`,
    );
    expect(await docstatus('Audit Task', target)).toBe(1);
    expect((await move('Audit Hash', linker, 'cancel')).status).toBe(200);
    expect((await CANCELS[path]!(target)).status).toBe(200);
    expect(await docstatus('Audit Task', target)).toBe(2);
  },
);

test('a draft linking does not stop the cancel (it would stop a delete)', async () => {
  const target = await submitted('Audit Task', {});
  await hash({ task: target });
  expect((await move('Audit Task', target, 'cancel')).status).toBe(200);
});

test("a submitted document's child row and Dynamic Link refuse the cancel, naming the document", async () => {
  const byRow = await submitted('Audit Task', {});
  const rowLinker = await submitted('Audit Hash', { steps: [{}, { task: byRow }] });
  expectRefused(
    await move('Audit Task', byRow, 'cancel'),
    `Cannot delete or cancel because Audit Task ${byRow} is linked with Audit Hash ${rowLinker}`,
  );
  const byDynamic = await submitted('Audit Task', {});
  const dynamicLinker = await submitted('Audit Hash', { ref_type: 'Audit Task', ref_name: byDynamic });
  expectRefused(
    await move('Audit Task', byDynamic, 'cancel'),
    `Cannot delete or cancel because Audit Task ${byDynamic} is linked with Audit Hash ${dynamicLinker}`,
  );
  expect([await docstatus('Audit Task', byRow), await docstatus('Audit Task', byDynamic)]).toEqual([1, 1]);
});

test("a Single's Link refuses the cancel, as Frappe's", async () => {
  const target = await submitted('Audit Task', {});
  const set = await t.http
    .put('/api/v2/document/Audit Settings/Audit Settings')
    .set(auth())
    .send({ default_task: target });
  expect(set.status).toBe(200);
  expectRefused(
    await move('Audit Task', target, 'cancel'),
    `Cannot delete or cancel because Audit Task ${target} is linked with Audit Settings`,
  );
  await t.http.put('/api/v2/document/Audit Settings/Audit Settings').set(auth()).send({ default_task: null });
  expect((await move('Audit Task', target, 'cancel')).status).toBe(200);
});

test("the DocTypes the controller's on_cancel names in ignore_linked_doctypes do not stop it; others still do", async () => {
  const target = await submitted('Audit Task', { title: 'ignore hashes' });
  await submitted('Audit Hash', { task: target });
  expect((await move('Audit Task', target, 'cancel')).status).toBe(200);
  const other = await submitted('Audit Task', { title: 'ignore hashes' });
  const linker = await submitted('Audit Task', { related_task: other });
  expectRefused(
    await move('Audit Task', other, 'cancel'),
    `Cannot delete or cancel because Audit Task ${other} is linked with Audit Task ${linker}`,
  );
});

test("ignore_linked_doctypes in a request body is not the controller's: the cancel is still refused", async () => {
  const target = await submitted('Audit Task', {});
  const linker = await submitted('Audit Hash', { task: target });
  for (const res of [
    await t.http
      .put(`/api/resource/Audit Task/${target}`)
      .set(auth())
      .send({ docstatus: 2, ignore_linked_doctypes: ['Audit Hash'] }),
    await t.http
      .post(`/api/v2/document/Audit Task/${target}/method/cancel`)
      .set(auth())
      .send({ ignore_linked_doctypes: ['Audit Hash'] }),
  ])
    expectRefused(
      res,
      `Cannot delete or cancel because Audit Task ${target} is linked with Audit Hash ${linker}`,
    );
  expect(await docstatus('Audit Task', target)).toBe(1);
});
