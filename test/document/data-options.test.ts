// Data fields with options Email, Phone, URL and Name are validated as Frappe validates them: a bad value is 400 with
// Frappe's exc_type, on create, on update and in child rows, and nothing is stored; empty values and good values pass.
import { countRows, expectErrorBody, v1, v2, type ApiVersion } from '../api/api-version';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { isFrappeUrl } from '../../runtime/document/data-options';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const DOCTYPE = 'Contact Card';
const create = (api: ApiVersion, body: object) =>
  t.http.post(api.collection(DOCTYPE)).set('Authorization', t.adminToken).send(body);

test.each([
  ['an email', { email: 'ada@example.com' }],
  ['an email with a display name', { email: 'Ada Lovelace <ada@example.com>' }],
  ['several emails', { email: 'ada@example.com, bob@example.org' }],
  ['Administrator in an Email field of an Administrator document', { email: 'Administrator' }],
  ['a phone number', { phone: '+44 (0)20 7946-0958' }],
  ['a phone number with an extension', { phone: '555-0100 #12' }],
  ['an https URL', { website: 'https://example.com/a?b=c' }],
  ['a mailto URL', { website: 'mailto:ada@example.com' }],
  ['a path from the root', { website: '/files/card.png' }],
  ['a name with an apostrophe and a hyphen', { full_name: "Ada O'Neil-King" }],
  ['a name in another script', { full_name: 'Łukasz Żółć 漢字' }],
  ['empty values', { email: '', phone: '', website: '', full_name: '' }],
  ['a child row with a good phone', { phones: [{ number: '12345', email: 'x@y.io' }] }],
])('%s is accepted', async (_label, body) => {
  for (const api of [v1(), v2]) {
    const res = await create(api, body);
    expect([api.version, res.status, res.body.exc_type]).toEqual([api.version, 201, undefined]);
  }
});

test.each([
  [
    'an email without a domain dot',
    { email: 'ada@example' },
    'InvalidEmailAddressError',
    'ada@example is not a valid Email Address',
  ],
  [
    'text with a space',
    { email: 'ada lovelace' },
    'InvalidEmailAddressError',
    'is not a valid Email Address',
  ],
  [
    'the second of two emails',
    { email: 'ada@example.com, nope' },
    'InvalidEmailAddressError',
    'nope is not a valid Email Address',
  ],
  [
    'markup in an email (escaped in the message)',
    { email: '<b>@x' },
    'InvalidEmailAddressError',
    '&lt;b&gt;@x',
  ],
  ['a standard user name with junk', { email: 'Guest@' }, 'InvalidEmailAddressError', 'Guest@'],
  [
    'letters in a phone',
    { phone: 'call me' },
    'InvalidPhoneNumberError',
    'call me is not a valid Phone Number',
  ],
  [
    'a phone longer than 20',
    { phone: '1'.repeat(21) },
    'InvalidPhoneNumberError',
    'is not a valid Phone Number',
  ],
  [
    'a URL without a scheme',
    { website: 'example.com' },
    'ValidationError',
    "'example.com' is not a valid URL",
  ],
  ['a scheme alone', { website: 'https://' }, 'ValidationError', 'is not a valid URL'],
  [
    'a name with digits and symbols',
    { full_name: 'Ada <script>' },
    'InvalidNameError',
    'is not a valid Name',
  ],
  ['a name with two spaces', { full_name: 'Ada  Lovelace' }, 'InvalidNameError', 'is not a valid Name'],
  [
    'a bad phone in a child row',
    { phones: [{ number: 'x' }] },
    'InvalidPhoneNumberError',
    'x is not a valid Phone Number',
  ],
  [
    'a bad email in a child row',
    { phones: [{ email: 'no' }] },
    'InvalidEmailAddressError',
    'no is not a valid Email Address',
  ],
])('%s is 400 %s, nothing stored', async (_label, body, excType, message) => {
  for (const api of [v1(), v2]) {
    const before = await countRows(t, DOCTYPE);
    const childRows = await countRows(t, 'Contact Card Phone');
    const res = await create(api, body);
    expect([api.version, res.status]).toEqual([api.version, 400]);
    expectErrorBody(res.body, api.version, excType);
    expect(res.body.exception).toContain(message);
    expect(await countRows(t, DOCTYPE)).toBe(before);
    expect(await countRows(t, 'Contact Card Phone')).toBe(childRows);
  }
});

test('an update with a bad value is refused and the stored value stays', async () => {
  const created = await create(v2, { email: 'ada@example.com', phone: '123', website: 'https://a.example' });
  const name = created.body.data.name as string;
  for (const change of [{ email: 'ada@' }, { phone: 'abc' }, { website: 'nowhere' }, { full_name: '!!' }]) {
    const res = await t.http.put(v2.item(DOCTYPE, name)).set('Authorization', t.adminToken).send(change);
    expect([change, res.status]).toEqual([change, 400]);
  }
  const reread = await t.http.get(v2.item(DOCTYPE, name)).set('Authorization', t.adminToken);
  expect(reread.body.data).toMatchObject({
    email: 'ada@example.com',
    phone: '123',
    website: 'https://a.example',
    modified: created.body.data.modified,
  });
});

test('a Data field without options takes any text', async () => {
  const res = await create(v2, { note: 'not an email, not a url, 123 !!' });
  expect(res.status).toBe(201);
});

test.each([
  ['http://example.com', true],
  ['ftp://host', true],
  ['urn:isbn:123', true],
  ['  https://example.com', true],
  ['/relative/path', true],
  ['relative/path', false],
  ['1http://x', false],
  ['http:', false],
  ['http://?q', false],
  ['http:?q', false],
  ['', false],
])('URL %j is %s as urlsplit reads it', (url, valid) => {
  expect(isFrappeUrl(url)).toBe(valid);
});
