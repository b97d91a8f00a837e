// A name that is taken is 409 DuplicateEntryError, also when an After Insert Server Script queries the database. In a
// group-commit batch the document's row is held back until the next statement: on PostgreSQL the script's first
// statement sent it, its duplicate key aborted the transaction, and the script's statement was refused instead (25P02),
// so the create answered 500. Now the work runs again alone and fails on its own INSERT, as it would without the script.
import { createTestSite, type TestSite } from '../helpers/test-site';
import { permissionRegistry } from '../permissions/helpers/permission-site';
import { saveScript } from './script-helpers';

let t: TestSite;
beforeAll(async () => {
  // Perm Case: submittable, with amended_from (an amendment is named <orig>-1).
  t = await createTestSite({ registry: await permissionRegistry() });
  await saveScript(t, {
    script_type: 'DocType Event',
    reference_doctype: 'Perm Case',
    doctype_event: 'After Insert',
    // The ToDo's Link check (role) is the script's first statement: it sends the document's held row first.
    script: "frappe.new_doc('ToDo', { description: 'after insert of ' + doc.name, role: 'System Manager' })",
  });
});
afterAll(() => t?.close());

const create = (body: object) =>
  t.http
    .post('/api/v2/document/Perm Case')
    .set('Authorization', t.adminToken)
    .send({ title: 'c', ...body });
/** The ToDos the script made for `name`: one per create that committed. */
const todosFor = async (name: string) =>
  Number(
    (
      (await t.site.db
        .knex('tabToDo')
        .where({ description: `after insert of ${name}` })
        .count({ n: '*' })) as {
        n: unknown;
      }[]
    )[0]!.n,
  );

test('a name given twice: 201, then 409 DuplicateEntryError, and the second script run is rolled back', async () => {
  const first = await create({ name: 'PC-taken' });
  expect(first.status).toBe(201);
  const again = await create({ name: 'PC-taken' });
  expect([again.status, again.body.exc_type]).toEqual([409, 'DuplicateEntryError']);
  expect(await todosFor('PC-taken')).toBe(1);
});

test('an amendment whose name <orig>-1 is taken: 409 DuplicateEntryError', async () => {
  const orig = await create({ docstatus: 1 });
  expect(orig.status).toBe(201);
  const name = orig.body.data.name as string;
  const cancelled = await t.http
    .put(`/api/v2/document/Perm Case/${name}`)
    .set('Authorization', t.adminToken)
    .send({ docstatus: 2 });
  expect(cancelled.status).toBe(200);
  const amended = await create({ amended_from: name });
  expect([amended.status, amended.body.data?.name]).toEqual([201, `${name}-1`]);
  const again = await create({ amended_from: name });
  expect([again.status, again.body.exc_type]).toEqual([409, 'DuplicateEntryError']);
  expect(await todosFor(`${name}-1`)).toBe(1);
});
