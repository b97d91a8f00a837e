// Who may import (Frappe's can_import): the DocType allows it (`allow_import`) and the user is a System Manager or
// holds the `import` right on it; checked when a Data Import is saved and again when it is previewed or started.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { callImportMethod, importFile, newImport, uploadFile } from './import-helpers';

let t: TestSite;
let clerk: string;
let importer: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  // A site whose Data Import is open to a role of its own, beside System Manager.
  t.site.registry.get('Data Import')!.meta.permissions.push({
    role: 'Import Clerk',
    permlevel: 0,
    ifOwner: false,
    rights: ['read', 'write', 'create'],
  });
  for (const role_name of ['Import Clerk', 'Query Reader', 'Query Owner Reader', 'Query Importer']) {
    const res = await t.http
      .post('/api/resource/Role')
      .set('Authorization', t.adminToken)
      .send({ role_name });
    expect([201, 409]).toContain(res.status);
  }
  // Query Owner Reader may create Query Orders but holds no `import` right; Query Reader holds it.
  clerk = await createUser(t, 'clerk@example.com', ['Import Clerk', 'Query Owner Reader']);
  importer = await createUser(t, 'importer@example.com', ['Import Clerk', 'Query Reader']);
}, 120_000);
afterAll(() => t.close());

const CSV = 'title,status\nfrom a file,Open\n';
const imports = async () => Number((await t.site.db.knex('tabData Import').count({ n: '*' }).first())!.n);

test('a DocType without allow_import cannot be imported, not even by Administrator', async () => {
  const before = await imports();
  const res = await t.http
    .post('/api/v2/document/Data Import')
    .set('Authorization', t.adminToken)
    .send({ reference_doctype: 'Note', import_type: 'Insert New Records' });
  expect(res.status).toBe(400);
  expect(res.body.errors[0].message).toBe('Importing Note is not allowed');
  expect(await imports()).toBe(before);
});

test('a user without the import right cannot save a Data Import of the DocType', async () => {
  const before = await imports();
  const url = await uploadFile(t, clerk, CSV, 'clerk.csv');
  const res = await t.http
    .post('/api/v2/document/Data Import')
    .set('Authorization', clerk)
    .send({ reference_doctype: 'Query Order', import_type: 'Insert New Records', import_file: url });
  expect(res.status).toBe(403);
  expect(res.body.errors[0].message).toBe('You are not allowed to import Query Order');
  expect(await imports()).toBe(before);
});

test('nor preview or start one another user saved', async () => {
  const name = await newImport(
    t,
    t.adminToken,
    'Query Order',
    await uploadFile(t, t.adminToken, CSV, 'a.csv'),
  );
  for (const method of ['get_preview_from_template', 'form_start_import']) {
    const res = await callImportMethod(t, clerk, method, { data_import: name });
    expect(res.status).toBe(403);
    expect(res.body.exc_type).toBe('PermissionError');
  }
  const record = await t.site.db.knex('tabData Import').where({ name }).first();
  expect(record.job_id).toBeNull();
});

test('a user with the import right saves and previews one', async () => {
  const name = await newImport(t, importer, 'Query Order', await uploadFile(t, importer, CSV, 'b.csv'));
  const res = await callImportMethod(t, importer, 'get_preview_from_template', { data_import: name });
  expect(res.status).toBe(200);
  expect(res.body.data.warnings).toEqual([]);
  expect(res.body.data.payload_count).toBe(1);
});

test('a user who may not create: one error per document in the log, the job finishes, no 500', async () => {
  // Query Importer holds the `import` right on Query Order, not `create`.
  const sm = await createUser(t, 'no-create@example.com', ['Import Clerk', 'Query Importer']);
  const { name, job } = await importFile(
    t,
    sm,
    'Query Order',
    'title,status\n/a,Open\n/b,Closed\n',
    'log.csv',
  );
  expect(job.status).toBe('finished');
  expect(job.result).toEqual({ total: 2, success_count: 0, failure_count: 2 });
  const rows = await t.site.db.knex('tabData Import Log').where({ data_import: name }).orderBy('log_index');
  expect(
    rows.map((r: any) => [JSON.parse(r.row_indexes), Number(r.success), JSON.parse(r.messages)[0].exc_type]),
  ).toEqual([
    [[2], 0, 'PermissionError'],
    [[3], 0, 'PermissionError'],
  ]);
  expect((await t.site.db.knex('tabData Import').where({ name }).first()).status).toBe('Error');
  const failed = await t.http
    .post('/api/v2/method/frappe.core.doctype.data_import.data_import.download_errored_template')
    .set('Authorization', sm)
    .send({ data_import_name: name });
  expect(failed.status).toBe(200);
  expect(failed.text.replace(/^\ufeff/, '')).toBe('title,status\n/a,Open\n/b,Closed\n');
  const other = await createUser(t, 'nobody@example.com', []);
  const start = await callImportMethod(t, other, 'form_start_import', { data_import: name });
  expect(start.status).toBe(403);
});

test('the meta shows allow_import', async () => {
  for (const [doctype, flag] of [
    ['Query Order', 1],
    ['Note', 0],
  ] as const) {
    const res = await t.http.get(`/api/v2/doctype/${doctype}/meta`).set('Authorization', t.adminToken);
    expect(res.status).toBe(200);
    expect(res.body.data.allow_import).toBe(flag);
  }
});

test("a reader's export, edited and imported as an update, keeps the child values the reader cannot see", async () => {
  const made = await t.http
    .post('/api/v2/document/Query Order')
    .set('Authorization', t.adminToken)
    .send({
      title: 'round trip by a reader',
      lines: [
        { item: 'r1', qty: 1, unit_cost: 11 },
        { item: 'r2', qty: 2, unit_cost: 22 },
      ],
    });
  expect(made.status).toBe(201);
  const order = made.body.data;
  const exported = await t.http
    .get('/api/v2/document/Query Order/export')
    .query({ filters: JSON.stringify([['name', '=', order.name]]) })
    .set('Authorization', importer);
  expect(exported.status).toBe(200);
  const lines = exported.text.replace(/^\ufeff/, '').split('\n');
  const header = (lines[0] as string).split(',');
  expect(header).toContain('lines.name');
  expect(header).not.toContain('lines.unit_cost');
  // The first row's qty 1 → 5.
  const qty = header.indexOf('lines.qty');
  const first = (lines[1] as string).split(',');
  first[qty] = '5';
  lines[1] = first.join(',');
  const { job } = await importFile(
    t,
    importer,
    'Query Order',
    lines.join('\n'),
    'reader-update.csv',
    'Update Existing Records',
  );
  expect(job.result).toEqual({ total: 1, success_count: 1, failure_count: 0 });
  const after = await t.http
    .get(`/api/v2/document/Query Order/${order.name}`)
    .set('Authorization', t.adminToken);
  expect(after.body.data.lines.map((l: any) => [l.name, l.item, l.qty, l.unit_cost])).toEqual([
    [order.lines[0].name, 'r1', 5, 11],
    [order.lines[1].name, 'r2', 2, 22],
  ]);
}, 60_000);

test('a number cell must be decimal text: 0x10, 0b1 and Infinity fail their document, 1,200 is 1200', async () => {
  const csv = 'title,qty\nhex,0x10\nbinary,0b1\ninfinite,Infinity\nplain,12\nthousands,"1,200"\n';
  const name = await newImport(
    t,
    t.adminToken,
    'Query Order',
    await uploadFile(t, t.adminToken, csv, 'n.csv'),
  );
  const preview = await callImportMethod(t, t.adminToken, 'get_preview_from_template', { data_import: name });
  expect(preview.status).toBe(200);
  expect(preview.body.data.warnings.map((w: any) => [w.row, w.message])).toEqual([
    [[2], 'line 2: qty: "0x10" is not a number'],
    [[3], 'line 3: qty: "0b1" is not a number'],
    [[4], 'line 4: qty: "Infinity" is not a number'],
  ]);
  expect(preview.body.data.data.map((d: any) => d.doc.qty)).toEqual([
    undefined,
    undefined,
    undefined,
    12,
    1200,
  ]);
});

test('a Guest is 401 at the export, as everywhere (not 403)', async () => {
  const res = await t.http.get('/api/v2/document/Query Order/export');
  expect(res.status).toBe(401);
});
