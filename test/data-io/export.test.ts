// Export (CONTRACT 12): every matching document the user may read, streamed as CSV, XLSX or JSON in the Data Import
// template layout (child rows as `<table>.<field>` columns, one more line per child row), formula text escaped.
import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { captureLog } from '../helpers/captured-log';
import { csvLine } from '../../runtime/data-export/export-stream';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let reader: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  reader = await createUser(t, 'reader@export.test', ['Query Reader']);
  for (const description of ['plain', '=cmd|" /C calc"!A0', '+1+1', '-2', '@SUM(A1)'])
    expect(
      (await t.http.post('/api/v2/document/ToDo').set('Authorization', t.adminToken).send({ description }))
        .status,
    ).toBe(201);
  const note = await t.http
    .post('/api/v2/document/Note')
    .set('Authorization', t.adminToken)
    .send({
      title: 'with rows',
      public: 1,
      seen_by: [{ user: 'Administrator' }, { user: 'Guest' }, { user: 'reader@export.test' }],
    });
  expect(note.status).toBe(201);
});
afterAll(() => t.close());

const get = (path: string, auth = t.adminToken) =>
  t.http
    .get(path)
    .set('Authorization', auth)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
const csvOf = (body: Buffer): string[][] =>
  parse(body.toString('utf8'), { bom: true, relax_column_count: true });

test('CSV: header of fieldnames, every document, formula text escaped', async () => {
  const res = await get(
    '/api/v2/document/ToDo/export?fields=["name","description","status"]&order_by=creation asc',
  );
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
  const rows = csvOf(res.body);
  expect(rows[0]).toEqual(['name', 'description', 'status']);
  expect(rows.slice(1).map((r) => r[1])).toEqual([
    'plain',
    `'=cmd|" /C calc"!A0`,
    "'+1+1",
    "'-2",
    "'@SUM(A1)",
  ]);
  expect(rows.slice(1).every((r) => r[2] === 'Open')).toBe(true);
});

test('child rows: one more line per child row, the parent cells empty on them', async () => {
  const res = await get('/api/v2/document/Note/export?fields=["name","title","seen_by.user"]');
  expect(res.status).toBe(200);
  const rows = csvOf(res.body);
  expect(rows[0]).toEqual(['name', 'title', 'seen_by.user']);
  expect(rows.slice(1).map((r) => r.slice(1))).toEqual([
    ['with rows', 'Administrator'],
    ['', 'Guest'],
    ['', 'reader@export.test'],
  ]);
});

test('XLSX holds the same cells as CSV', async () => {
  const res = await get('/api/v2/document/Note/export?format=xlsx&fields=["title","seen_by.user"]');
  expect(res.status).toBe(200);
  const book = new ExcelJS.Workbook();
  await book.xlsx.load(res.body);
  const sheet = book.worksheets[0]!;
  const cells: unknown[][] = [];
  sheet.eachRow((row) => cells.push((row.values as unknown[]).slice(1)));
  expect(cells).toEqual([
    ['title', 'seen_by.user'],
    ['with rows', 'Administrator'],
    [undefined, 'Guest'],
    [undefined, 'reader@export.test'],
  ]);
});

test('JSON: the documents with their child rows nested', async () => {
  const res = await get('/api/v2/document/Note/export?format=json&fields=["title","seen_by.user"]');
  expect(res.status).toBe(200);
  const docs = JSON.parse(res.body.toString('utf8'));
  expect(docs).toHaveLength(1);
  expect(docs[0].seen_by.map((r: { user: string }) => r.user)).toEqual([
    'Administrator',
    'Guest',
    'reader@export.test',
  ]);
});

test('paging past one page: every document once, in order', async () => {
  const docs = Array.from({ length: 2500 }, (_, i) => ({
    description: `bulk-${String(i).padStart(5, '0')}`,
  }));
  const ins = await t.http
    .post('/api/v2/document/ToDo/bulk_insert')
    .set('Authorization', t.adminToken)
    .send({ docs });
  expect([200, 202]).toContain(ins.status);
  const until = Date.now() + 60_000;
  while (Number((await t.site.db.knex('tabToDo').count({ n: '*' }).first())!.n) < 2505 && Date.now() < until)
    await new Promise((r) => setTimeout(r, 100));
  const res = await get(
    '/api/v2/document/ToDo/export?fields=["description"]&filters=[["description","like","bulk-%"]]&order_by=description asc',
  );
  const rows = csvOf(res.body)
    .slice(1)
    .map((r) => r[0]);
  expect(rows).toEqual(docs.map((d) => d.description));
});

test('permlevels: a reader without level 1 gets no level-1 columns, in children too; asking for one is a 403', async () => {
  const order = await t.http
    .post('/api/v2/document/Query Order')
    .set('Authorization', t.adminToken)
    .send({ title: 'o1', cost: 5, pin: 'secret', lines: [{ item: 'a', qty: 1, unit_cost: 3 }] });
  expect(order.status).toBe(201);
  const res = await get('/api/v2/document/Query Order/export', reader);
  expect(res.status).toBe(200);
  const rows = csvOf(res.body);
  expect(rows[0]).toEqual([
    'name',
    'title',
    'status',
    'customer',
    'assigned_to',
    'amount',
    'qty',
    'urgent',
    'order_date',
    'ship_at',
    'note',
    'lines.name',
    'lines.item',
    'lines.qty',
    'lines.rate',
    'lines.customer',
  ]);
  expect(rows[1]?.slice(-4)).toEqual(['a', '1', '0', '']);
  const admin = csvOf((await get('/api/v2/document/Query Order/export')).body)[0];
  expect(admin).toContain('cost');
  expect(admin).toContain('lines.unit_cost');
  expect(admin).not.toContain('pin');
  expect((await get('/api/v2/document/Query Order/export?fields=["title","cost"]', reader)).status).toBe(403);
  expect(
    (await get('/api/v2/document/Query Order/export?fields=["title","lines.unit_cost"]', reader)).status,
  ).toBe(403);
  expect((await get('/api/v2/document/Query Order/export?fields=["pin"]')).status).toBe(400);
});

test('hostile requests: unknown column, bad format, bad filter, no rights: JSON errors', async () => {
  const bad = async (path: string, status: number, auth = t.adminToken) => {
    const res = await t.http.get(path).set('Authorization', auth);
    expect(res.status).toBe(status);
    expect(res.type).toBe('application/json');
    return res.body;
  };
  expect((await bad('/api/v2/document/ToDo/export?fields=["nope"]', 400)).exception ?? '').toBeDefined();
  await bad('/api/v2/document/ToDo/export?fields=["seen_by.user"]', 400);
  await bad('/api/v2/document/ToDo/export?format=pdf', 400);
  await bad('/api/v2/document/ToDo/export?filters=[["description","=1 or 1=1--","x"]]', 400);
  await bad('/api/v2/document/ToDo/export?order_by=description; drop table tabToDo', 400);
  await bad('/api/v2/document/Nope/export', 404);
  await bad('/api/v2/document/User/export', 403, reader);
});

test('exporting needs the export right (Frappe can_export): a reader without it gets 403, for a template with rows too', async () => {
  const owner = await createUser(t, 'owner-reader@export.test', ['Query Owner Reader']);
  const refused = await t.http.get('/api/v2/document/Query Order/export').set('Authorization', owner);
  expect(refused.status).toBe(403);
  expect(refused.body.exc_type).toBe('PermissionError');
  expect(refused.body.exception).toContain('not allowed to export Query Order');
  const template = (records: string, version = '') =>
    t.http
      .get(`/api${version}/method/frappe.core.doctype.data_import.data_import.download_template`)
      .query({ doctype: 'Query Order', export_records: records })
      .set('Authorization', owner);
  expect((await template('all')).status).toBe(403);
  expect((await template('5_records', '/v2')).status).toBe(403);
  // A blank template is the layout alone (Frappe's Exporter reads no rows for it).
  expect((await template('blank_template')).status).toBe(200);
  // System Manager exports without an export row, as in Frappe.
  expect((await get('/api/v2/document/Query Order/export')).status).toBe(200);
});

test('download_template answers on v1 as on v2 (it used to be 405 on v1)', async () => {
  for (const version of ['', '/v2']) {
    const res = await t.http
      .get(`/api${version}/method/frappe.core.doctype.data_import.data_import.download_template`)
      .query({ doctype: 'ToDo', export_records: '5_records' })
      .set('Authorization', t.adminToken);
    expect(res.status).toBe(200);
    expect(res.type).toBe('text/csv');
  }
});

test('every export of documents leaves an audit line: who, which DocType, filtered or whole', async () => {
  const log = captureLog();
  try {
    expect((await get('/api/v2/document/Query Order/export', reader)).status).toBe(200);
    expect((await get('/api/v2/document/ToDo/export?filters=[["status","=","Open"]]')).status).toBe(200);
  } finally {
    log.restore();
  }
  expect(log.lines.filter((l) => l.event === 'export').map((l) => [l.user, l.doctype, l.filtered])).toEqual([
    ['reader@export.test', 'Query Order', false],
    ['Administrator', 'ToDo', true],
  ]);
});

test('CSV cells holding a ; are quoted: a spreadsheet splitting on ; keeps x;=HYPERLINK(…) one text cell', () => {
  expect(csvLine(['x;=HYPERLINK("http://evil")', 'plain', 1])).toBe(
    '"x;=HYPERLINK(""http://evil"")",plain,1\n',
  );
});
