// A preview finds what the import job would refuse by name: a document named like one that exists, and (each document
// being checked in a transaction of its own, rolled back) one named like an earlier document of the same file. Through
// /api/method as through /api/v2/method: the preview checks documents as the job imports them (v2, client names kept).
import { createTestSite, type TestSite } from '../helpers/test-site';
import { importFile, newImport, uploadFile } from './import-helpers';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite();
  const res = await t.http
    .post('/api/v2/document/ToDo')
    .set('Authorization', t.adminToken)
    .send({ name: 'taken-1', description: 'already here' });
  expect(res.status).toBe(201);
});
afterAll(() => t.close());

const CSV = [
  'name,description',
  'taken-1,exists already',
  'new-1,first of two',
  'new-1,second of two',
  'new-2,alone',
  '"new-3",once',
].join('\n');

async function preview(path: string) {
  const name = await newImport(t, t.adminToken, 'ToDo', await uploadFile(t, t.adminToken, CSV, 'names.csv'));
  const res = await t.http
    .post(`${path}.get_preview_from_template`)
    .set('Authorization', t.adminToken)
    .send({ data_import: name });
  expect(res.status).toBe(200);
  return (path.startsWith('/api/v2') ? res.body.data : res.body.message) as {
    warnings: { row: number[]; message: string; exc_type: string }[];
    checked_count: number;
  };
}

test.each([
  ['/api/method/frappe.core.doctype.data_import.data_import'],
  ['/api/v2/method/frappe.core.doctype.data_import.data_import'],
])('the preview through %s warns of the existing name and of the name the file repeats', async (path) => {
  const data = await preview(path);
  expect(data.checked_count).toBe(5);
  const byRow = data.warnings.map((w) => [w.row, w.exc_type]);
  expect(byRow).toEqual([
    [[2], 'DuplicateEntryError'],
    [[4], 'DuplicateEntryError'],
  ]);
  expect(data.warnings[1]?.message).toMatch(/new-1.*line 3/);
});

test('the job refuses the same documents', async () => {
  const { job } = await importFile(t, t.adminToken, 'ToDo', CSV, 'names-job.csv');
  expect(job.result).toEqual({ total: 5, success_count: 3, failure_count: 2 });
});
