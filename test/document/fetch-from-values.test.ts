// A fetched value is stored as the fetching field's type holds it, on every database: an Int into a Data field is its
// text, a numeric Data into an Int its number, a Date into a Datetime midnight, a Text Editor's HTML into a Small Text
// plain text. A value the field cannot hold is 400 DataError naming the field and its fetch_from; nothing is stored.
import { countRows } from '../api/api-version';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });

async function supplier(name: string, values: object): Promise<void> {
  const res = await t.http
    .post('/api/v2/document/Fetch Supplier')
    .set(auth())
    .send({ supplier_name: name, ...values });
  expect(res.status).toBe(201);
}

const postOrder = (body: object) => t.http.post('/api/v2/document/Fetch Order').set(auth()).send(body);

test('values of other types are converted to the fetching field and read back the same', async () => {
  await supplier('Typed Co', {
    rating: 7,
    code: ' 42 ',
    credit_limit: 1234.56,
    since: '2024-02-29',
    notes: '<p>Fish &amp; <b>chips</b>&nbsp;&#8364;5 &lt;daily&gt;</p>',
  });
  const res = await postOrder({ supplier: 'Typed Co', rating_text: 'spoofed', code_number: 1 });
  expect(res.status).toBe(201);
  const want = {
    rating_text: '7',
    code_number: 42,
    credit_limit: 1234.56,
    since: '2024-02-29 00:00:00',
    notes_text: 'Fish & chips\u00a0€5 <daily>',
  };
  expect(res.body.data).toMatchObject(want);
  const stored = await t.http.get(`/api/v2/document/Fetch Order/${res.body.data.name}`).set(auth());
  expect(stored.body.data).toMatchObject(want);
});

test('unset linked values: an unset Int is the 0 its column holds, unset text and dates are NULL', async () => {
  await supplier('Empty Co', {});
  const res = await postOrder({ supplier: 'Empty Co', rating_text: 'spoofed', code_number: 5 });
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({
    rating_text: '0',
    code_number: null,
    notes_text: null,
    since: null,
  });
});

test.each([
  ['a text that is no number into an Int', { code: 'ABC-1' }, 'Code Number (code_number)', 'supplier.code'],
  ['a text longer than the Data field', { tagline: 'x'.repeat(41) }, 'Tagline (tagline)', 'supplier.tagline'],
])(
  '%s is 400 DataError naming the field and its fetch_from; nothing stored',
  async (label, values, field, from) => {
    const name = `Refused ${label.split(' ')[2]}`;
    await supplier(name, values);
    const before = await countRows(t, 'Fetch Order');
    const res = await postOrder({ supplier: name });
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe('DataError');
    expect(res.body.exception).toContain(field);
    expect(res.body.exception).toContain(`fetched from ${from}`);
    expect(await countRows(t, 'Fetch Order')).toBe(before);
  },
);
