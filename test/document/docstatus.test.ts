// docstatus transitions of a submittable DocType: submit 0→1, cancel 1→2, refused moves, update after submit, delete rules.
import type { HookCall } from '../fixtures/doctypes/widgets/record-hooks';
import { countRows } from '../api/api-version';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
let calls: HookCall[];
beforeAll(async () => {
  const registry = await fixtureRegistry();
  calls = (registry.get('Gadget Order')?.controller as { hookCalls: HookCall[] }).hookCalls;
  t = await createTestSite({ registry });
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });
const url = (name: string) => `/api/v2/document/Gadget Order/${name}`;
const hooksOf = (customer: string) => calls.filter((c) => c.key === customer).map((c) => c.hook);
const create = async (customer: string, extra: object = {}) => {
  const res = await t.http
    .post('/api/v2/document/Gadget Order')
    .set(auth())
    .send({ customer, qty: 1, parts: [{ part_name: 'p' }], ...extra });
  expect(res.status).toBe(201);
  return res.body.data as { name: string; docstatus: number };
};
const put = (name: string, body: object) => t.http.put(url(name)).set(auth()).send(body);
const stored = (name: string) => t.site.db.knex('tabGadget Order').where({ name }).first();

test('submit (0→1) runs before_submit and on_submit, and marks the child rows submitted', async () => {
  const doc = await create('submit me');
  calls.length = 0;
  const res = await put(doc.name, { docstatus: 1 });
  expect(res.status).toBe(200);
  expect(res.body.data.docstatus).toBe(1);
  expect(hooksOf('submit me')).toEqual([
    'before_validate',
    'validate',
    'before_submit',
    'on_update',
    'on_submit',
  ]);
  expect(Number((await stored(doc.name)).docstatus)).toBe(1);
  const [row] = await t.site.db.knex('tabWidget Part').where({ parent: doc.name });
  expect(Number(row.docstatus)).toBe(1);
});

test('create with docstatus 1 inserts and submits at once', async () => {
  const doc = await create('born submitted', { docstatus: 1 });
  expect(doc.docstatus).toBe(1);
  expect(hooksOf('born submitted')).toContain('on_submit');
});

test('cancel (1→2) runs before_cancel and on_cancel', async () => {
  const doc = await create('cancel me', { docstatus: 1 });
  calls.length = 0;
  const res = await put(doc.name, { docstatus: 2 });
  expect(res.status).toBe(200);
  expect(res.body.data.docstatus).toBe(2);
  expect(hooksOf('cancel me')).toEqual(['before_cancel', 'on_cancel']);
});

test.each([
  ['draft → cancelled (0→2)', 0, { docstatus: 2 }],
  ['submitted → draft (1→0)', 1, { docstatus: 0 }],
  ['cancelled → draft (2→0)', 2, { docstatus: 0 }],
  ['cancelled → submitted (2→1)', 2, { docstatus: 1 }],
  ['editing a cancelled document', 2, { qty: 5 }],
  ['a docstatus outside 0..2', 0, { docstatus: 3 }],
])('%s is 400 and nothing changes', async (_label, start, change) => {
  const doc = await create(
    `move ${JSON.stringify(change)} from ${start}`,
    start >= 1 ? { docstatus: 1 } : {},
  );
  if (start === 2) expect((await put(doc.name, { docstatus: 2 })).status).toBe(200);
  const before = await stored(doc.name);
  const res = await put(doc.name, change);
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toMatch(/DocstatusTransitionError|ValidationError|DataError/);
  expect(await stored(doc.name)).toEqual(before);
});

test('after submit only allow_on_submit fields may change', async () => {
  const doc = await create('after submit', { docstatus: 1 });
  const allowed = await put(doc.name, { remarks: 'delivered late' });
  expect(allowed.status).toBe(200);
  expect(allowed.body.data).toMatchObject({ remarks: 'delivered late', docstatus: 1 });
  const before = await stored(doc.name);
  for (const change of [{ qty: 7 }, { customer: 'someone else' }]) {
    const res = await put(doc.name, change);
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe('UpdateAfterSubmitError');
  }
  expect(await stored(doc.name)).toEqual(before);
});

test('after submit the rows of a table without allow_on_submit cannot change', async () => {
  const doc = await create('rows after submit', { docstatus: 1 });
  const rows = (await t.http.get(url(doc.name)).set(auth())).body.data.parts as {
    name: string;
    part_name: string;
  }[];
  const unchanged = await put(doc.name, { parts: rows });
  expect(unchanged.status).toBe(200);
  const before = await t.site.db.knex('tabWidget Part').where({ parent: doc.name });
  for (const parts of [
    [...rows, { part_name: 'added' }],
    [],
    rows.map((r) => ({ ...r, part_name: 'renamed' })),
  ]) {
    const res = await put(doc.name, { parts });
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe('UpdateAfterSubmitError');
  }
  expect(await t.site.db.knex('tabWidget Part').where({ parent: doc.name })).toEqual(before);
});

test('a submitted document cannot be deleted; a cancelled one can', async () => {
  const doc = await create('delete rules', { docstatus: 1 });
  const refused = await t.http.delete(url(doc.name)).set(auth());
  expect(refused.status).toBe(400);
  expect(await countRows(t, 'Gadget Order', { name: doc.name })).toBe(1);
  expect(await countRows(t, 'Widget Part', { parent: doc.name })).toBe(1);
  expect((await put(doc.name, { docstatus: 2 })).status).toBe(200);
  expect((await t.http.delete(url(doc.name)).set(auth())).status).toBe(202);
  expect(await countRows(t, 'Gadget Order', { name: doc.name })).toBe(0);
});

test('a DocType that is not submittable refuses docstatus 1', async () => {
  const res = await t.http
    .post('/api/v2/document/Widget')
    .set(auth())
    .send({ title: 'not submittable', docstatus: 1 });
  expect(res.status).toBe(400);
  expect(await countRows(t, 'Widget', { title: 'not submittable' })).toBe(0);
  const { body } = await t.http.post('/api/v2/document/Widget').set(auth()).send({ title: 'draft widget' });
  expect(
    (await t.http.put(`/api/v2/document/Widget/${body.data.name}`).set(auth()).send({ docstatus: 1 })).status,
  ).toBe(400);
});

test('after submit an allow_on_submit table takes new rows, but its kept rows keep their other fields', async () => {
  const doc = await create('deliveries after submit', { docstatus: 1 });
  const added = await put(doc.name, { deliveries: [{ part_name: 'first' }] });
  expect(added.status).toBe(200);
  const [row] = added.body.data.deliveries as { name: string; part_name: string }[];
  const more = await put(doc.name, { deliveries: [row, { part_name: 'second' }] });
  expect(more.status).toBe(200);
  const before = await t.site.db
    .knex('tabWidget Part')
    .where({ parent: doc.name, parentfield: 'deliveries' });
  const changed = await put(doc.name, {
    deliveries: (more.body.data.deliveries as { name: string }[]).map((r) => ({
      ...r,
      part_name: 'changed',
    })),
  });
  expect(changed.status).toBe(400);
  expect(changed.body.exc_type).toBe('UpdateAfterSubmitError');
  expect(
    await t.site.db.knex('tabWidget Part').where({ parent: doc.name, parentfield: 'deliveries' }),
  ).toEqual(before);
});
