// Round trips (CONTRACT 12): export → import into an empty site → the same documents, child rows included, in CSV and
// XLSX (text that begins with `'` before a formula start included); and an update of existing documents by name.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { callImportMethod, importFile } from './import-helpers';

let from: TestSite;
let to: TestSite;
beforeAll(async () => {
  const registry = await fixtureRegistry();
  from = await createTestSite({ registry });
  to = await createTestSite({ registry });
  const orders = [
    {
      title: 'plain',
      status: 'Open',
      amount: 12.5,
      qty: 3,
      urgent: 1,
      order_date: '2026-01-31',
      ship_at: '2026-02-01 10:20:30',
      note: 'line one\nline "two", three',
      cost: 4,
      lines: [
        { item: 'a', qty: 1, rate: 2.25, unit_cost: 1 },
        { item: '=b', qty: 2, rate: 0 },
        { item: 'c' },
      ],
    },
    { title: '=cmd|" /C calc"!A0', status: 'Closed', amount: -3, qty: 0, note: 'ünïcödé ✓', lines: [] },
    { title: 'one line', status: 'Cancelled', lines: [{ item: '@x', qty: -1, rate: -1.5 }] },
    // Text that already begins with the export's escape: it gets one more, and the import removes one.
    { title: "'=already escaped", status: 'Open', lines: [{ item: "''+1" }] },
    // Carriage returns: an XLSX reader turns a literal one (and CR LF) into a line feed.
    { title: '\r=1', status: 'Open', note: 'a\r\nb', lines: [{ item: 'x\ry' }] },
  ];
  for (const order of orders) {
    const res = await from.http
      .post('/api/v2/document/Query Order')
      .set('Authorization', from.adminToken)
      .send(order);
    expect(res.status).toBe(201);
  }
}, 180_000);
afterAll(async () => {
  await from.close();
  await to.close();
});

const FIELDS = ['title', 'status', 'amount', 'qty', 'urgent', 'order_date', 'ship_at', 'note', 'cost'];
const LINE_FIELDS = ['item', 'qty', 'rate', 'unit_cost'];
async function documents(t: TestSite): Promise<unknown[]> {
  const res = await t.http
    .get('/api/v2/document/Query Order')
    .query({
      fields: JSON.stringify(['name', ...FIELDS, { lines: LINE_FIELDS }]),
      order_by: 'title asc',
      limit: 100,
    })
    .set('Authorization', t.adminToken);
  expect(res.status).toBe(200);
  return res.body.data;
}
const raw = (res: any): Buffer => res.body as Buffer;
const download = (t: TestSite, path: string) =>
  t.http
    .get(path)
    .set('Authorization', t.adminToken)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });

describe.each(['csv', 'xlsx'])('%s', (format) => {
  test('export → import into an empty site → equal documents, child rows included', async () => {
    await to.site.db.knex('tabQuery Order Line').del();
    await to.site.db.knex('tabQuery Order').del();
    const exported = await download(from, `/api/v2/document/Query Order/export?format=${format}`);
    expect(exported.status).toBe(200);
    const { job } = await importFile(to, to.adminToken, 'Query Order', raw(exported), `orders.${format}`);
    expect(job.status).toBe('finished');
    expect(job.result).toEqual({ total: 5, success_count: 5, failure_count: 0 });
    expect(job.progress).toEqual({ done: 5, total: 5 });
    expect(await documents(to)).toEqual(await documents(from));
  }, 60_000);
});

test('update by name: changed cells are saved, the rest of each document kept', async () => {
  const before = (await documents(to)) as Record<string, any>[];
  const plain = before.find((d) => d.title === 'plain')!;
  const csv = `name,status,lines.item\n${plain.name},Closed,x\n,,y\n`;
  const { name, job } = await importFile(
    to,
    to.adminToken,
    'Query Order',
    csv,
    'update.csv',
    'Update Existing Records',
  );
  expect(job.result).toEqual({ total: 1, success_count: 1, failure_count: 0 });
  const after = (await documents(to)) as Record<string, any>[];
  const updated = after.find((d) => d.name === plain.name)!;
  expect(updated.status).toBe('Closed');
  expect(updated.amount).toBe(plain.amount);
  expect(updated.lines.map((l: any) => l.item)).toEqual(['x', 'y']);
  const status = await callImportMethod(to, to.adminToken, 'get_import_status', { data_import_name: name });
  expect(status.body.data).toMatchObject({ status: 'Success', success: 1, failed: 0, total_records: 1 });
  const missing = await importFile(
    to,
    to.adminToken,
    'Query Order',
    'name,status\nno-such-order,Closed\n',
    'u2.csv',
    'Update Existing Records',
  );
  expect(missing.job.result).toEqual({ total: 1, success_count: 0, failure_count: 1 });
}, 180_000);

test('update by name: a child row named in the file keeps the values its empty cells leave out (Frappe)', async () => {
  const res = await to.http
    .post('/api/v2/document/Query Order')
    .set('Authorization', to.adminToken)
    .send({
      title: 'rows kept',
      lines: [
        { item: 'g1', qty: 3, rate: 2.5 },
        { item: 'g2', qty: 4 },
      ],
    });
  const order = res.body.data;
  const [first] = order.lines as [{ name: string }];
  // The first row named with its qty cell empty and no rate column; a new row; the second row not in the file.
  const csv = `name,title,lines.name,lines.item,lines.qty\n${order.name},rows kept,${first.name},g3,\n,,,new,1\n`;
  const { job } = await importFile(
    to,
    to.adminToken,
    'Query Order',
    csv,
    'rows.csv',
    'Update Existing Records',
  );
  expect(job.result).toEqual({ total: 1, success_count: 1, failure_count: 0 });
  const after = await to.http
    .get(`/api/v2/document/Query Order/${order.name}`)
    .set('Authorization', to.adminToken);
  expect(after.body.data.lines.map((l: any) => [l.name === first.name, l.item, l.qty, l.rate])).toEqual([
    [true, 'g3', 3, 2.5],
    [false, 'new', 1, 0],
  ]);
}, 60_000);
