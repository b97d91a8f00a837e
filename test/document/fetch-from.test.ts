// fetch_from on the server, as Frappe's get_invalid_links: every save with a Link check copies the linked document's
// value into the fields whose fetch_from goes through that Link (its own child rows' Links too), fetch_if_empty fields
// only while empty, and into a submitted document only the allow_on_submit ones.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });
const ORDERS = '/api/v2/document/Fetch Order';

/** Creates a Fetch Supplier named `name` with `values`. */
async function supplier(name: string, values: object = {}): Promise<void> {
  const res = await t.http
    .post('/api/v2/document/Fetch Supplier')
    .set(auth())
    .send({ supplier_name: name, region: 'North', credit_limit: 1500.25, rating: 4, ...values });
  expect(res.status).toBe(201);
}

const updateSupplier = async (name: string, values: object) =>
  expect((await t.http.put(`/api/v2/document/Fetch Supplier/${name}`).set(auth()).send(values)).status).toBe(
    200,
  );

async function order(body: object): Promise<Record<string, any>> {
  const res = await t.http.post(ORDERS).set(auth()).send(body);
  expect(res.status).toBe(201);
  return res.body.data;
}

const put = (name: string, body: object) => t.http.put(`${ORDERS}/${name}`).set(auth()).send(body);
const read = async (name: string) => (await t.http.get(`${ORDERS}/${name}`).set(auth())).body.data;

test('an insert fills the fetched fields, a mandatory one included, and stores them', async () => {
  await supplier('Insert Co');
  const created = await order({ supplier: 'Insert Co' });
  const fetched = {
    supplier_name: 'Insert Co',
    region: 'North',
    live_region: 'North',
    credit_limit: 1500.25,
    supplier_owner: 'Administrator',
  };
  expect(created).toMatchObject(fetched);
  expect(await read(created.name)).toMatchObject(fetched);
});

test('a value the client sends for a fetched field is overwritten by the linked value', async () => {
  await supplier('Overwrite Co');
  const created = await order({ supplier: 'Overwrite Co', supplier_name: 'Spoofed', credit_limit: 1 });
  expect(created).toMatchObject({ supplier_name: 'Overwrite Co', credit_limit: 1500.25 });
  expect(await read(created.name)).toMatchObject({ supplier_name: 'Overwrite Co', credit_limit: 1500.25 });
});

test('fetch_if_empty keeps a value the client sends and fills an empty one, on insert and on update', async () => {
  await supplier('If Empty Co', { region: 'East' });
  const kept = await order({ supplier: 'If Empty Co', region: 'Custom' });
  const filled = await order({ supplier: 'If Empty Co', region: '' });
  const unsent = await order({ supplier: 'If Empty Co' });
  expect([kept.region, filled.region, unsent.region]).toEqual(['Custom', 'East', 'East']);
  await updateSupplier('If Empty Co', { region: 'West' });
  // Not empty any more: an update keeps it, while the always-fetched field follows the supplier.
  const res = await put(unsent.name, {});
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({ region: 'East', live_region: 'West' });
  expect((await put(unsent.name, { region: null })).body.data.region).toBe('West');
});

test('changing the link fetches from the new document', async () => {
  await supplier('Old Co', { region: 'North', credit_limit: 10 });
  await supplier('New Co', { region: 'South', credit_limit: 20 });
  const created = await order({ supplier: 'Old Co' });
  const res = await put(created.name, { supplier: 'New Co' });
  expect(res.status).toBe(200);
  const fetched = { supplier_name: 'New Co', live_region: 'South', credit_limit: 20 };
  expect(res.body.data).toMatchObject({ ...fetched, region: 'North' });
  expect(await read(created.name)).toMatchObject(fetched);
});

test('every save fetches again: a changed linked document reaches the next save of a draft', async () => {
  await supplier('Moving Co', { credit_limit: 100 });
  const created = await order({ supplier: 'Moving Co' });
  await updateSupplier('Moving Co', { credit_limit: 250.5 });
  expect((await read(created.name)).credit_limit).toBe(100);
  const res = await put(created.name, {});
  expect(res.status).toBe(200);
  expect(await read(created.name)).toMatchObject({ credit_limit: 250.5 });
});

test("clearing the link leaves the fetched fields as they are, as Frappe's server (its form clears them)", async () => {
  await supplier('Cleared Co');
  const created = await order({ supplier: 'Cleared Co' });
  const res = await put(created.name, { supplier: null });
  expect(res.status).toBe(200);
  expect(await read(created.name)).toMatchObject({
    supplier: null,
    supplier_name: 'Cleared Co',
    credit_limit: 1500.25,
    live_region: 'North',
  });
  // A client clears them as Frappe's form does: by sending them empty.
  const emptied = await put(created.name, { supplier: null, credit_limit: 0, live_region: '' });
  expect(emptied.status).toBe(200);
  expect(await read(created.name)).toMatchObject({ credit_limit: 0, live_region: '' });
});

test('child rows fetch through their own Link fields', async () => {
  await supplier('Row A Co', { credit_limit: 11, rating: 1 });
  await supplier('Row B Co', { credit_limit: 22, rating: 2 });
  const created = await order({
    supplier: 'Row A Co',
    items: [
      { supplier: 'Row B Co', supplier_name: 'spoofed' },
      { supplier: 'Row A Co' },
      { supplier_name: 'no link, kept' },
    ],
  });
  const rows = [
    { supplier: 'Row B Co', supplier_name: 'Row B Co', credit_limit: 22, live_rating: 2 },
    { supplier: 'Row A Co', supplier_name: 'Row A Co', credit_limit: 11, live_rating: 1 },
    { supplier: null, supplier_name: 'no link, kept' },
  ];
  expect(created.items).toMatchObject(rows);
  expect((await read(created.name)).items).toMatchObject(rows);
});

test('after submit only allow_on_submit fields fetch again; a row added then fetches everything', async () => {
  await supplier('Submitted Co', { region: 'North', credit_limit: 100, rating: 1 });
  const created = await order({ supplier: 'Submitted Co', items: [{ supplier: 'Submitted Co' }] });
  const submitted = await put(created.name, { docstatus: 1 });
  expect(submitted.status).toBe(200);
  await updateSupplier('Submitted Co', { region: 'South', credit_limit: 999, rating: 5 });
  const current = await read(created.name);
  const res = await put(created.name, {
    items: [...current.items, { supplier: 'Submitted Co' }],
  });
  expect(res.status).toBe(200);
  const after = await read(created.name);
  expect(after).toMatchObject({ docstatus: 1, live_region: 'South', credit_limit: 100, region: 'North' });
  expect(after.items).toMatchObject([
    { credit_limit: 100, live_rating: 5 },
    { credit_limit: 999, live_rating: 5 },
  ]);
});

test('submitting a stored draft fetches only allow_on_submit fields, as Frappe (it is no longer new)', async () => {
  await supplier('Draft Co', { region: 'North', credit_limit: 100 });
  const created = await order({ supplier: 'Draft Co' });
  await updateSupplier('Draft Co', { region: 'Mid', credit_limit: 555 });
  const res = await put(created.name, { docstatus: 1 });
  expect(res.status).toBe(200);
  expect(await read(created.name)).toMatchObject({ docstatus: 1, live_region: 'Mid', credit_limit: 100 });
});

test('a Link to a Single fetches its value', async () => {
  const settings = '/api/v2/document/Widget Settings/Widget Settings';
  expect((await t.http.put(settings).set(auth()).send({ site_label: 'Fetched Label' })).status).toBe(200);
  await supplier('Single Co');
  const created = await order({ supplier: 'Single Co', settings: 'Widget Settings', site_label: 'spoofed' });
  expect(created.site_label).toBe('Fetched Label');
  expect((await read(created.name)).site_label).toBe('Fetched Label');
});

test('a document submitted by its insert fetches every field (it is new)', async () => {
  await supplier('Born Submitted Co', { credit_limit: 42 });
  const created = await order({
    supplier: 'Born Submitted Co',
    docstatus: 1,
    items: [{ supplier: 'Born Submitted Co' }],
  });
  expect(created).toMatchObject({ docstatus: 1, supplier_name: 'Born Submitted Co', credit_limit: 42 });
  expect(created.items).toMatchObject([{ supplier_name: 'Born Submitted Co', credit_limit: 42 }]);
});

test('a Dynamic Link fetches from the DocType it names; one without the source field fetches nothing', async () => {
  await supplier('Dynamic Co');
  const created = await order({
    supplier: 'Dynamic Co',
    party_type: 'Fetch Supplier',
    party: 'Dynamic Co',
    party_name: 'spoofed',
  });
  expect(created.party_name).toBe('Dynamic Co');
  const todo = await t.http.post('/api/resource/ToDo').set(auth()).send({ description: 'party' });
  const res = await put(created.name, {
    party_type: 'ToDo',
    party: todo.body.data.name,
    party_name: 'as sent',
  });
  expect(res.status).toBe(200);
  expect(await read(created.name)).toMatchObject({ party_type: 'ToDo', party_name: 'as sent' });
});

test('bulk_insert goes through the same save: each inserted document is fetched', async () => {
  await supplier('Bulk Co', { credit_limit: 77 });
  const res = await t.http
    .post(`${ORDERS}/bulk_insert`)
    .set(auth())
    .send({ docs: [{ supplier: 'Bulk Co' }, { supplier: 'Bulk Co', supplier_name: 'spoofed' }] });
  expect(res.status).toBe(200);
  expect(res.body.data.inserted).toHaveLength(2);
  for (const name of res.body.data.inserted)
    expect(await read(name)).toMatchObject({ supplier_name: 'Bulk Co', credit_limit: 77 });
});

test("ToDo's assigned_by_full_name is fetched from the User, as Frappe's ToDo", async () => {
  const user = await t.http
    .post('/api/v2/document/User')
    .set(auth())
    .send({ email: 'fetch.me@example.com', first_name: 'Fetch', last_name: 'Me' });
  expect(user.status).toBe(201);
  const res = await t.http
    .post('/api/v2/document/ToDo')
    .set(auth())
    .send({ description: 'x', assigned_by: 'fetch.me@example.com', assigned_by_full_name: 'someone else' });
  expect(res.status).toBe(201);
  expect(res.body.data.assigned_by_full_name).toBe(user.body.data.full_name);
  expect(user.body.data.full_name).toBe('Fetch Me');
});

test("a User's full name is its first and last names, on every save (Frappe's set_full_name)", async () => {
  const name = 'full.name@example.com';
  const made = await t.http
    .post('/api/v2/document/User')
    .set(auth())
    .send({ email: name, first_name: 'Ada', full_name: 'Not Her' });
  expect(made.body.data.full_name).toBe('Ada');
  const changed = await t.http
    .put(`/api/v2/document/User/${name}`)
    .set(auth())
    .send({ last_name: 'Lovelace' });
  expect(changed.status).toBe(200);
  expect(changed.body.data.full_name).toBe('Ada Lovelace');
});
